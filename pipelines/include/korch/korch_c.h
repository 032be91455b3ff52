// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* korch's C API: what a Fortran or C physics code needs to run its own blocks through the runtime
 * (docs/c-api.md). Every function returns KORCH_OK (0) or a non-zero status; the message of the
 * last failure on the calling thread is korch_last_error(). No C++ exception leaves these
 * functions.
 *
 *   korch_initialize(NULL);
 *   korch_blocks* mesh;   korch_blocks_create("heat", 1, &mesh);
 *   korch_blocks_add(mesh, &shape, u, extent, KORCH_FORTRAN_ORDER, &id);     one call per block
 *   korch_bundle* steps;  korch_bundle_create("step", &steps);
 *   korch_bundle_add(steps, "A", heat_step, NULL);
 *   korch_configuration* cpu;  korch_configuration_builtin("cpu_only", &cpu);
 *   korch_execute(steps, cpu, mesh, KORCH_ALL_BLOCKS, 0);
 *   ... korch_*_destroy, korch_finalize();
 *
 * Block layout. A block of cells {nx, ny, nz} with guard {gx, gy, gz} and nv variables is one
 * array. KORCH_FORTRAN_ORDER: u(nx + 2gx, ny + 2gy, nz + 2gz, nv) column-major (Fortran's own
 * order, i fastest), extent = {nx + 2gx, ny + 2gy, nz + 2gz, nv}; a 2-D code passes nz = 1, gz = 0.
 * KORCH_C_ORDER: u[nv][nx + 2gx][ny + 2gy][nz + 2gz] row-major, extent = {nv, nx + 2gx, ...}.
 * `data` is the first element (the low guard corner of variable 0).
 *
 * Action routines run on the runtime's team threads, several at once: they must be reentrant
 * (Fortran: `recursive`, or compile with -frecursive). Each call gets one item (a tile or a whole
 * block) and the block's array:
 *   item->lo, item->hi   the cells to update, inclusive, numbered as a Fortran code declares its
 *                        block u(1-gx:nx+gx, 1-gy:ny+gy, 1-gz:nz+gz, nv): interior 1..n, guard
 *                        cells 1-g..0 and n+1..n+g.
 *   item->stride         distance in doubles along (var, i, j, k), for C routines.
 * A routine returns 0, or non-zero to fail the cycle; korch_routine_message() before returning
 * adds a message to the error that korch_execute() reports.
 *
 * Handles (korch_blocks*, korch_bundle*, ...) are opaque values, never addresses to dereference.
 * korch checks each one it is given: a destroyed handle (destroying twice included), a handle of
 * another kind or any other value is KORCH_ERROR with a message naming the parameter, the handle and
 * its kind. Destroying NULL does nothing, as free(NULL). The objects a running cycle uses (its
 * bundle, configuration, blocks, exchange) cannot be changed or destroyed until it returns, and
 * korch_finalize refuses while a cycle runs: from an action routine, or from another thread, each is
 * KORCH_ERROR, and the object stays valid. Handles may be used from several threads.
 *
 * Ranks and guard cells (docs/c-api.md): each rank adds its own blocks with korch_blocks_add_global
 * (a global id unique over all ranks), describes what lies next to each block in every direction
 * (korch_neighbours_set), and korch fills the guard cells, within the rank and from other ranks, and
 * calls the code's routine for its own boundaries (KORCH_NEIGHBOUR_USER, korch_exchange_set_boundary_fill):
 *   korch_start_mpi();                     or korch_use_communicator(MPI_Comm_c2f(comm))
 *   korch_neighbours* near;  korch_neighbours_create(2, &near);
 *   korch_neighbours_set(near, id, (int32_t[3]){-1, 0, 0}, KORCH_NEIGHBOUR_BLOCK, left, left_rank);
 *   korch_exchange* fill;  korch_exchange_create(mesh, near, NULL, &fill);      collective
 *   korch_execute_filled(steps, cpu, fill, 0, 1);   blocks handed out as their guard cells are valid
 */
#ifndef KORCH_C_H
#define KORCH_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KORCH_OK = 0, KORCH_ERROR = 1, KORCH_ERROR_INTERNAL = 2 };
enum { KORCH_FORTRAN_ORDER = 0, KORCH_C_ORDER = 1 };
enum { KORCH_ALL_BLOCKS = 0, KORCH_LEAF_BLOCKS = 1, KORCH_LEVEL_BLOCKS = 2 };
enum { KORCH_NEIGHBOUR_BLOCK = 0, KORCH_NEIGHBOUR_OUTFLOW = 1, KORCH_NEIGHBOUR_NONE = 2, KORCH_NEIGHBOUR_USER = 3 };

typedef struct korch_options {
  int32_t n_teams; /* 0: the runtime's default for each field */
  int32_t threads_per_team;
  int32_t n_helpers;
  int32_t helper_threads;
} korch_options;

typedef struct korch_block_shape {
  int32_t cells[3];      /* interior cells per direction */
  int32_t guard[3];      /* guard cells per side */
  int32_t tile_cells[3]; /* tile size; 0: the whole interior */
  int32_t level;
  int32_t leaf;        /* 0: a finer block covers this one */
  double lo_coord[3];  /* physical coordinate of the interior's low corner (metadata) */
  double delta[3];     /* cell size (metadata) */
  int32_t position[3]; /* 0-based position among the blocks of its level: with `level`, the block's
                          place in an adaptive mesh's tree (korch_forest_create); metadata otherwise */
} korch_block_shape;

typedef struct korch_item {
  int64_t stride[4]; /* (var, i, j, k), in doubles */
  double delta[3];
  double lo_coord[3];
  int32_t block; /* id in the block list (0-based, the order of korch_blocks_add) */
  int32_t tile;  /* tile index (0-based), -1 for a whole block */
  int32_t level;
  int32_t n_vars;
  int32_t cells[3];
  int32_t guard[3];
  int32_t lo[3]; /* inclusive, Fortran numbering (interior 1..n) */
  int32_t hi[3];
  /* Face variables (korch_blocks_create_with_faces): face_data[a] is the block's faces across axis a
   * from its low guard corner (NULL across an axis the block has no faces across, or in a list
   * without face variables), laid out as the code gave them, with face_stride[a] (var, i, j, k) in
   * doubles. Face i across an axis is the low face of cell i, so in the Fortran numbering the faces
   * bounding the cells lo..hi along that axis are lo..hi+1. */
  int32_t n_face_vars;
  double* face_data[3];
  int64_t face_stride[3][4];
} korch_item;

typedef int (*korch_action_fn)(const korch_item* item, double* data, void* user);
/* The code's own boundary condition (korch_exchange_set_boundary_fill): fills the guard cells of
 * region->block beyond its faces in `direction`, variables [first_var, first_var + n_vars) (0-based). */
typedef int (*korch_boundary_fn)(const korch_item* region, const int32_t direction[3], int32_t first_var,
                                 int32_t n_vars, double* data, void* user);

typedef struct korch_blocks korch_blocks;
typedef struct korch_bundle korch_bundle;
typedef struct korch_configuration korch_configuration;
typedef struct korch_neighbours korch_neighbours;
typedef struct korch_exchange korch_exchange;
typedef struct korch_ready korch_ready;
typedef struct korch_forest korch_forest;
/* The code's poll routine (korch_ready_create): tests the code's own guard-cell messages and marks
 * each block whose guard cells are now valid with korch_ready_mark. Returns 0, or non-zero to fail
 * the cycle (with the message korch_routine_message gave before returning). */
typedef int (*korch_poll_fn)(korch_ready* ready, void* user);

/* Initializes Kokkos (unless the code did) and creates the runtime; options may be NULL. */
int korch_initialize(const korch_options* options);
/* Destroys the runtime, and finalizes Kokkos if korch_initialize initialized it. An error while a
 * cycle runs (from its action routines or another thread): finalize after korch_execute returns. */
int korch_finalize(void);

int korch_blocks_create(const char* name, int32_t n_vars, korch_blocks** out);
/* Checks the shape's sizes against korch's limits, in 64 bits (stored cells per direction, cells
 * times variables, tiles per block), and `extent` against the shape (the array's declared shape, in
 * `order`); *id gets the block's id. */
int korch_blocks_add(korch_blocks* blocks, const korch_block_shape* shape, double* data, const int64_t extent[4],
                     int32_t order, int32_t* id);
/* The same with the block's id among the blocks of every rank (the id neighbour lists name); without
 * it a block's global id is its id in this list, which on several ranks is not unique. */
int korch_blocks_add_global(korch_blocks* blocks, const korch_block_shape* shape, int32_t global_id, double* data,
                            const int64_t extent[4], int32_t order, int32_t* id);
/* A block whose array is in device memory (cudaMalloc, hipMalloc, OpenACC or OpenMP target data;
 * on a host build, ordinary memory): the array stays the primary copy between cycles, guard cells of
 * such blocks are filled on the device and messages to other ranks are packed there. A routine on the
 * host gets a host copy that korch writes back to the array before korch_execute returns
 * (docs/c-api.md, "Blocks in device memory"). A list holds host blocks or device blocks, not both.
 * global_id: as korch_blocks_add_global, or -1 for the block's id in this list. */
int korch_blocks_add_device(korch_blocks* blocks, const korch_block_shape* shape, int32_t global_id,
                            double* device_data, const int64_t extent[4], int32_t order, int32_t* id);
/* A list whose blocks also hold n_face_vars variables on their faces (docs/c-api.md, "Face
 * variables"): fluxes, face-centred fields. Blocks are then added with korch_blocks_add_with_faces. */
int korch_blocks_create_with_faces(const char* name, int32_t n_vars, int32_t n_face_vars, korch_blocks** out);
/* A host block and its face arrays: face_data[a] the faces across axis a (x, y, z), an array of the
 * cells' shape with one more face along a and n_face_vars in place of n_vars, given as
 * face_extent[4 * a .. 4 * a + 3] in `order`; NULL (extents ignored) across an axis along which the
 * block stores one cell. global_id: as korch_blocks_add_global, or -1 for the block's id in this list. */
int korch_blocks_add_with_faces(korch_blocks* blocks, const korch_block_shape* shape, int32_t global_id, double* data,
                                const int64_t extent[4], double* const face_data[3], const int64_t face_extent[12],
                                int32_t order, int32_t* id);
/* Forgets every block (the arrays stay the code's; blocks in device memory get what routines wrote
 * first), so that a code that changed its mesh lists the new blocks with korch_blocks_add*: ids
 * start at 0 again, and the next korch_execute runs the new blocks. An exchange made before is
 * refused from then on (its message says so): make a new one for the new blocks. */
int korch_blocks_clear(korch_blocks* blocks);
int korch_blocks_destroy(korch_blocks* blocks);

int korch_bundle_create(const char* name, korch_bundle** out);
/* `action` is the name the configuration's teams apply (the built-ins name A, B, C). */
int korch_bundle_add(korch_bundle* bundle, const char* action, korch_action_fn routine, void* user);
int korch_bundle_destroy(korch_bundle* bundle);

int korch_configuration_builtin(const char* name, korch_configuration** out);
/* The built-in with its slots (the actions A, B, C its teams apply) renamed to the bundle's action
 * names, in slot order: n_actions names, at most the built-in's number of slots; an optional slot
 * left out drops the teams that would apply it. A wrong count or name is KORCH_ERROR naming the
 * built-in and its slots. On every built-in but gpu_internal (which hands its action metadata only)
 * a C or Fortran routine runs on tiles, blocks and packets of them: a packet's routine is called once
 * per entry, on a copy laid out as the code's own block (docs/c-api.md, "Built-in configurations").
 * On a GPU build, configurations whose routines get packets in device memory are refused. */
int korch_configuration_builtin_bound(const char* name, const char* const* actions, int32_t n_actions,
                                      korch_configuration** out);
/* Declares which variables (0-based) `action` reads and writes, so that the packets that reach the
 * teams applying it carry them: copy-in what the actions they reach read, copy-in-out what they
 * write. Without it a built-in's packets carry what its slot writes (A variable 0, B 1, C 2) or, in
 * gpu_only and cpu_gpu_data_parallel, every variable. Call it again to replace a declaration. */
int korch_configuration_packet_variables(korch_configuration* configuration, const char* action, const int32_t* reads,
                                         int32_t n_reads, const int32_t* writes, int32_t n_writes);
int korch_configuration_json(const char* json, korch_configuration** out);
int korch_configuration_destroy(korch_configuration* configuration);

/* One cycle: iterator is KORCH_ALL_BLOCKS, KORCH_LEAF_BLOCKS or KORCH_LEVEL_BLOCKS (with `level`). */
int korch_execute(const korch_bundle* bundle, const korch_configuration* configuration, korch_blocks* blocks,
                  int32_t iterator, int32_t level);

/* Ranks. korch_start_mpi initializes MPI (MPI_THREAD_FUNNELED) when an MPI launcher started this
 * process and MPI is not running yet; korch_finalize then finalizes it. A code that runs MPI itself
 * gives korch its communicator instead, by its Fortran handle (C: MPI_Comm_c2f(comm); Fortran: the
 * integer handle or comm%MPI_VAL). Either tells korch the ranks (docs/ranks.md). korch_ranks gives
 * this process's rank and the number of ranks of the communicator korch uses (MPI_COMM_WORLD unless
 * korch_use_communicator said otherwise; 0 of 1 without MPI). */
int korch_start_mpi(void);
int korch_use_communicator(int32_t fortran_handle);
int korch_ranks(int32_t* rank, int32_t* size);

/* Neighbour lists: dims 1, 2 or 3; for block `block` (its id in this rank's korch_blocks) and a
 * direction {dx, dy, dz} (each -1, 0 or +1, not all 0, none beyond dims): KORCH_NEIGHBOUR_BLOCK
 * (`global_id` on `rank`; a periodic domain names the wrapped block), KORCH_NEIGHBOUR_OUTFLOW (the
 * domain's edge: the nearest interior cell), KORCH_NEIGHBOUR_NONE (leave those guard cells) or
 * KORCH_NEIGHBOUR_USER (the exchange's boundary fill fills them: a reflecting wall, an inflow). */
int korch_neighbours_create(int32_t dims, korch_neighbours** out);
int korch_neighbours_set(korch_neighbours* neighbours, int32_t block, const int32_t direction[3], int32_t kind,
                         int32_t global_id, int32_t rank);
int korch_neighbours_destroy(korch_neighbours* neighbours);

/* The guard-cell exchange of `blocks` from `neighbours` (copied), `width` guard cells per side (NULL:
 * every block's own). Collective: every rank calls it at once; a mistake in any rank's lists is the
 * same error on every rank. `blocks` must outlive the exchange and not change. */
int korch_exchange_create(korch_blocks* blocks, const korch_neighbours* neighbours, const int32_t width[3],
                          korch_exchange** out);
/* Fills the guard cells of variables [first_var, first_var + n_vars) (0-based) and returns. */
int korch_exchange_fill(korch_exchange* exchange, int32_t first_var, int32_t n_vars);
/* Asynchronously: start posts the messages; each next gives a block whose guard cells are now
 * valid (the blocks that need no other rank first, then the others as messages arrive, waiting for
 * them), and -1 once every block came and the fill is over. */
int korch_exchange_start(korch_exchange* exchange, int32_t first_var, int32_t n_vars);
int korch_exchange_next(korch_exchange* exchange, int32_t* block);
int korch_exchange_destroy(korch_exchange* exchange);
/* The code's boundary condition for the guard cells its lists mark KORCH_NEIGHBOUR_USER; required
 * before a fill when they name any (the fill, start and execute calls refuse to run without it).
 * korch calls fill(region, direction, first_var, n_vars, data, user) once per block and direction
 * whose guard cells resolve to USER (a face, and each edge and corner beyond it, unless an outflow
 * face there clamps them onto another neighbour), after that block's copies and messages, so it may
 * read the block's other guard cells (a corner mirrors what the exchange just copied):
 *   region               describes the block as an action routine's item does (tile -1, strides,
 *                        cells, guard, n_vars the block's variables); region->lo..hi (inclusive,
 *                        interior 1..n) are the guard cells to fill: along a component of
 *                        `direction` that is 0 the interior, along -1 the `width` guard cells below
 *                        it (1-w..0), along +1 those above it (n+1..n+w).
 *   direction            {dx, dy, dz}, each -1, 0 or +1, as given to korch_neighbours_set.
 *   first_var, n_vars    the variables of this fill, [first_var, first_var + n_vars), 0-based.
 *   data                 the block's array (its first element), as korch_blocks_add was given.
 * It runs on the thread that fills (korch_exchange_fill's and korch_exchange_next's caller, or one
 * thread of a cycle of korch_execute_filled), one block at a time. It returns 0, or non-zero to fail
 * the fill: korch then calls it no more in this fill, ends the fill (copies and messages, so none is
 * left in flight on any rank) and the call returns KORCH_ERROR naming the block, the direction and
 * the status, with the message korch_routine_message gave before returning. korch_exchange_fill
 * returns it at the end; korch_exchange_next on the call that filled the block, with *block -1 (the
 * fill is over); korch_execute_filled after its cycle, whose routines got the blocks left unfilled.
 * fill NULL removes it. */
int korch_exchange_set_boundary_fill(korch_exchange* exchange, korch_boundary_fn fill, void* user);
/* One cycle over the exchange's blocks, each handed to the teams as soon as its guard cells of
 * variables [first_var, first_var + n_vars) are valid (the fill runs inside the cycle). */
int korch_execute_filled(const korch_bundle* bundle, const korch_configuration* configuration, korch_exchange* exchange,
                         int32_t first_var, int32_t n_vars);

/* A code that fills its blocks' guard cells itself (its own exchange, its own fill across levels;
 * docs/c-api.md "The code's own guard-cell fill"): korch_execute_ready hands each block to the
 * cycle's teams once korch_ready_mark named it, so the teams compute while the code's messages for
 * other blocks are in flight.
 *   poll           called on the thread that called korch_execute_ready whenever no marked block
 *                  waits (with `user`); NULL when another thread marks the blocks.
 *   stall_seconds  a cycle in which no block is marked for this long fails, naming the unmarked
 *                  blocks (0: 120 s).
 * Every block of `blocks` must be marked once per cycle; a mark between cycles counts for the next.
 * `blocks` must outlive the object; korch_blocks_clear and new blocks are followed. */
int korch_ready_create(korch_blocks* blocks, korch_poll_fn poll, void* user, double stall_seconds, korch_ready** out);
/* Block `block` (its id in the list, 0-based) has valid guard cells. Any thread. */
int korch_ready_mark(korch_ready* ready, int32_t block);
/* Forgets the marks made for the next cycle (after a failed cycle, before filling anew). */
int korch_ready_clear(korch_ready* ready);
/* One cycle over the blocks, each handed out once marked. */
int korch_execute_ready(const korch_bundle* bundle, const korch_configuration* configuration, korch_ready* ready);
int korch_ready_destroy(korch_ready* ready);

/* A code's own adaptive mesh (docs/c-api.md "A code's own adaptive mesh"): every block of `blocks`
 * is a leaf of the code's tree, named by its korch_block_shape's level and position, all with the
 * same cells and guard cells; korch fills their guard cells across levels (same-level copies,
 * restriction from finer leaves, conservative prolongation from coarser ones) and across ranks.
 *   dims, roots, periodic  the tree's root blocks per axis (1 beyond dims), periodic axes (0 or 1);
 *   max_level              the finest level the code refines to.
 * Collective on korch's communicator: each rank lists its own leaves, in any order. A list that is
 * no balanced tree (a gap, a block listed twice, leaves two levels apart) is the same error on
 * every rank, naming the block. After its own regrid the code lists its leaves anew
 * (korch_blocks_clear, korch_blocks_add*) and calls korch_forest_relist on every rank; a fill or a
 * cycle on a list changed without it is refused. `blocks` must outlive the object. */
int korch_forest_create(korch_blocks* blocks, int32_t dims, const int32_t roots[3], const int32_t periodic[3],
                        int32_t max_level, korch_forest** out);
int korch_forest_relist(korch_forest* forest);
/* Fills every leaf's guard cells, every variable (collective). */
int korch_forest_fill(korch_forest* forest);
/* One cycle over the leaves, each handed to the teams once its guard cells of variables
 * [first_var, first_var + n_vars) (0-based) are filled; other ranks' leaves travel meanwhile. */
int korch_execute_forest(const korch_bundle* bundle, const korch_configuration* configuration, korch_forest* forest,
                         int32_t first_var, int32_t n_vars);
int korch_forest_destroy(korch_forest* forest);

/* The message of the calling thread's last failed call ("" if none). */
const char* korch_last_error(void);
/* Copies it into buffer (NUL-terminated, cut to capacity); returns its full length. */
size_t korch_copy_last_error(char* buffer, size_t capacity);
/* From inside an action routine: the reason it is about to return non-zero. */
void korch_routine_message(const char* message);

#ifdef __cplusplus
}
#endif

#endif
