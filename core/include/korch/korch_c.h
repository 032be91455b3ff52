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

typedef struct korch_options {
  int32_t n_teams;          /* 0: the runtime's default for each field */
  int32_t threads_per_team;
  int32_t n_helpers;
  int32_t helper_threads;
} korch_options;

typedef struct korch_block_shape {
  int32_t cells[3];       /* interior cells per direction */
  int32_t guard[3];       /* guard cells per side */
  int32_t tile_cells[3];  /* tile size; 0: the whole interior */
  int32_t level;
  int32_t leaf;           /* 0: a finer block covers this one */
  double lo_coord[3];     /* physical coordinate of the interior's low corner (metadata) */
  double delta[3];        /* cell size (metadata) */
} korch_block_shape;

typedef struct korch_item {
  int64_t stride[4];      /* (var, i, j, k), in doubles */
  double delta[3];
  double lo_coord[3];
  int32_t block;          /* id in the block list (0-based, the order of korch_blocks_add) */
  int32_t tile;           /* tile index (0-based), -1 for a whole block */
  int32_t level;
  int32_t n_vars;
  int32_t cells[3];
  int32_t guard[3];
  int32_t lo[3];          /* inclusive, Fortran numbering (interior 1..n) */
  int32_t hi[3];
} korch_item;

typedef int (*korch_action_fn)(const korch_item* item, double* data, void* user);

typedef struct korch_blocks korch_blocks;
typedef struct korch_bundle korch_bundle;
typedef struct korch_configuration korch_configuration;

/* Initializes Kokkos (unless the code did) and creates the runtime; options may be NULL. */
int korch_initialize(const korch_options* options);
/* Destroys the runtime, and finalizes Kokkos if korch_initialize initialized it. */
int korch_finalize(void);

int korch_blocks_create(const char* name, int32_t n_vars, korch_blocks** out);
/* Checks `extent` against the shape (the array's declared shape, in `order`); *id gets the block's id. */
int korch_blocks_add(korch_blocks* blocks, const korch_block_shape* shape, double* data, const int64_t extent[4],
                     int32_t order, int32_t* id);
int korch_blocks_destroy(korch_blocks* blocks);

int korch_bundle_create(const char* name, korch_bundle** out);
/* `action` is the name the configuration's teams apply (the built-ins name A, B, C). */
int korch_bundle_add(korch_bundle* bundle, const char* action, korch_action_fn routine, void* user);
int korch_bundle_destroy(korch_bundle* bundle);

int korch_configuration_builtin(const char* name, korch_configuration** out);
int korch_configuration_json(const char* json, korch_configuration** out);
int korch_configuration_destroy(korch_configuration* configuration);

/* One cycle: iterator is KORCH_ALL_BLOCKS, KORCH_LEAF_BLOCKS or KORCH_LEVEL_BLOCKS (with `level`). */
int korch_execute(const korch_bundle* bundle, const korch_configuration* configuration, korch_blocks* blocks,
                  int32_t iterator, int32_t level);

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
