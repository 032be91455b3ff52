// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ActionMetadata: the data item of the GPU-internal configuration (figure
// "GpuInternalConfig" of the design): no grid data travels, only what a kernel needs to find data that already
// lives on the device (a block id, a device pointer, a tag, arbitrary parameters).
#pragma once

#include <korch/action_parameters.hpp>
#include <korch/data_item.hpp>

#include <string>

namespace korch {

class ActionMetadata : public DataItem {
 public:
  ActionMetadata(int block, std::string tag = {}, void* device_pointer = nullptr, ActionParameters payload = {})
      : block_(block), tag_(std::move(tag)), device_pointer_(device_pointer), payload_(std::move(payload)) {}
  std::string describe() const override;

  int block_id() const noexcept { return block_; }
  const std::string& tag() const noexcept { return tag_; }
  void* device_pointer() const noexcept { return device_pointer_; }
  const ActionParameters& payload() const noexcept { return payload_; }

 private:
  int block_;
  std::string tag_;
  void* device_pointer_;
  ActionParameters payload_;
};

}  // namespace korch
