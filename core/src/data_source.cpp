#include <korch/data_source.hpp>

#include <atomic>

namespace korch {

namespace {
std::atomic<std::uint64_t> next_stamp{1};
std::uint64_t fresh_stamp() noexcept { return next_stamp.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

DataSource::DataSource() noexcept : stamp_(fresh_stamp()) {}
DataSource::DataSource(const DataSource&) noexcept : stamp_(fresh_stamp()) {}
DataSource& DataSource::operator=(const DataSource& other) noexcept {
  if (this != &other) new_layout();
  return *this;
}

bool DataSource::is_leaf(int) const { return true; }

void DataSource::new_layout() noexcept { stamp_ = fresh_stamp(); }

}  // namespace korch
