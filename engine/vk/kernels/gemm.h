// GEMM: C = alpha * op(A) * op(B) + beta * C, f32 with f32 accumulation, either operand
// transposed, strided-batched.
//
// Kernels: on CPU devices gemm_regblock multiplies one operand, read in place, by the
// other, read in place too where its rows or columns are 16-byte aligned vec4s or else
// first copied by gemm_pack into aligned, zero-padded panels in a workspace, with
// register blocking (computing C^T = op(B)^T op(A)^T instead when C is narrow: the
// panels run along C's columns); on GPUs gemm_tiled reads both in place through
// shared-memory tiles. A narrow product with a long K on the CPU path is split along
// K into partial sums and reduced (gemm_cpu_splits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/gemm_tiled.comp.
struct GemmTiledPush {
  std::uint32_t m, n, k;
  std::uint32_t lda, ldb, ldc;
  std::uint32_t stride_a, stride_b, stride_c;
  float alpha, beta;
  std::uint32_t bias_row, bias_col;  // the epilogue's (shaders/epilogue.glsl)
  float act_alpha, gate_alpha;
};
static_assert(sizeof(GemmTiledPush) == 60);
static_assert(offsetof(GemmTiledPush, lda) == 12 && offsetof(GemmTiledPush, stride_a) == 24 &&
              offsetof(GemmTiledPush, alpha) == 36);

// Mirrors the push-constant block of shaders/gemm_pack.comp.
struct GemmPackPush {
  std::uint32_t p_extent, k_extent;
  std::uint32_t stride_p, stride_k;
  std::uint32_t src_batch, dst_batch;  // dst_batch in vec4s
  std::uint32_t chunk;                 // runs of 4 k per workgroup
};
static_assert(sizeof(GemmPackPush) == 28 && offsetof(GemmPackPush, src_batch) == 16 &&
              offsetof(GemmPackPush, chunk) == 24);

// Mirrors the push-constant block of shaders/gemm_regblock.comp.
struct GemmRegblockPush {
  std::uint32_t m, n, k;
  std::uint32_t a_row, a_k;
  std::uint32_t stride_a;
  std::uint32_t b_batch;
  std::uint32_t c_row, c_col, stride_c;
  float alpha, beta;
  std::uint32_t a_offset, c_offset;
  std::uint32_t bias_row, bias_col;  // the epilogue's (shaders/epilogue.glsl)
  float act_alpha, gate_alpha;
  std::uint32_t b_ld, b_offset;  // op(B) read in place: in vec4s
};
static_assert(sizeof(GemmRegblockPush) == 80 && offsetof(GemmRegblockPush, a_row) == 12 &&
              offsetof(GemmRegblockPush, b_batch) == 24 && offsetof(GemmRegblockPush, alpha) == 40 &&
              offsetof(GemmRegblockPush, c_offset) == 52 && offsetof(GemmRegblockPush, bias_row) == 56 &&
              offsetof(GemmRegblockPush, b_ld) == 72);

// What gemm() does to each element v = alpha * (op(A) op(B))[r][c] + beta * C[r][c]
// before storing it, so that a layer costs one dispatch (shaders/epilogue.glsl), in
// this order: + bias[c]; + residual[r][c]; activation(v); or, for a backward pass,
// v * activation'(gate[r][c]) through the activation's gradient function (gate_fn,
// which reads the activation's input or output as vk::BinaryOp names it). bias holds
// n floats; residual and gate are laid out as C. At most one of residual and gate.
struct GemmEpilogue {
  BufferSlice bias, residual, gate;  // empty: none
  std::optional<UnaryOp> activation;  // relu, sigmoid, tanh, leaky_relu or elu
  float activation_alpha = 0.0f;      // leaky_relu's slope, elu's alpha
  std::optional<BinaryOp> gate_fn;    // relu_grad, sigmoid_grad, tanh_grad, leaky_relu_grad, elu_grad
  float gate_alpha = 0.0f;
  bool empty() const { return bias.size == 0 && residual.size == 0 && !activation && !gate_fn; }
};

// The GPU path's kernels and their tilings. The tests run each one a device can run
// (gemm_gpu_variants); vkpack_bench_kernels times them.
enum class GemmVariant {
  automatic,                // gemm_variant_for(): the matrix units for float16 operands, else tiled_64
  tiled_64,                 // gemm_tiled: 64 x 64 tiles, K by 16, 4 x 4 adjacent elements per invocation
  tiled_128,                // gemm_tiled: 128 x 128 tiles, K by 8, 8 x 8 per invocation in runs of 4
  tiled_128x64,             // gemm_tiled: 128 x 64 tiles, K by 16, 8 x 4 per invocation, all strided
  cooperative_matrix,       // gemm_coopmat on the matrix units (float16 products, float32 sums):
                            // 128 x 128 tiles, K by 32, 8 subgroups of 4 x 2 fragments
  cooperative_matrix_wide,  // gemm_coopmat: 128 x 256 tiles, K by 32, 8 subgroups of 4 x 4 fragments
  cooperative_matrix_64,    // gemm_coopmat: 64 x 64 tiles, K by 32, 4 subgroups of 2 x 2 fragments
  tiled_128_k16,            // gemm_tiled: 128 x 128 tiles, K by 16 (half the barriers of tiled_128)
  cooperative_matrix_k64,   // gemm_coopmat: 128 x 128 tiles, K by 64 (half the barriers), 8 x (4 x 2)
  cooperative_matrix_4sg,   // gemm_coopmat: 128 x 128 tiles, K by 32, 4 subgroups of 4 x 4 fragments
};
// Whether `variant` runs on the matrix units (float16 products).
bool on_matrix_units(GemmVariant variant);
std::string_view to_string(GemmVariant variant);

struct GemmArgs {
  std::uint32_t m = 0, n = 0, k = 0;   // op(A) is m x k, op(B) is k x n, C is m x n
  bool trans_a = false;                // A is stored k x m
  bool trans_b = false;                // B is stored n x k
  std::uint32_t batch = 1;
  // Row strides in elements; nullopt: packed (the stored matrix's column count).
  std::optional<std::uint32_t> lda, ldb, ldc;
  // Batch strides in elements; nullopt: packed. 0 reuses one matrix for every batch.
  std::optional<std::uint32_t> stride_a, stride_b, stride_c;
  float alpha = 1.0f;
  float beta = 0.0f;                   // 0: C is written without being read
  KernelChoice choice = KernelChoice::automatic;
  GemmVariant variant = GemmVariant::automatic;  // the GPU path's kernel; ignored on the CPU path
};

// The variants `device` runs: the tilings of gemm_tiled everywhere, those of gemm_coopmat
// where DeviceFeatures::cooperative_matrix offers 16 x 16 x 16 float16 products into float32,
// the subgroup size is fixed and the workgroup fits.
std::vector<GemmVariant> gemm_gpu_variants(const Device& device);
// Whether `device` runs kernels on its matrix units: DeviceFeatures::cooperative_matrix offers
// 16 x 16 x 16 float16 products into float32 and the subgroup size is fixed (the
// kernels size their loops by it).
bool has_matrix_units(const Device& device);
// The fixed rule for GemmVariant::automatic (what runs where tuning is off, below):
// cooperative_matrix when A and B both hold float16 (BufferSlice::f16: the products are
// then exact in float32, so nothing is rounded that was not already) and the device
// offers it; otherwise tiled_64. A named variant is returned as it is, or
// Error(unsupported) when the device lacks it.
GemmVariant gemm_variant_for(const GemmArgs& args, const BufferSlice& a, const BufferSlice& b, const Device& device);

// Measured choice: where the device's TuningCache is enabled (Device::kernels().tuning()), the GPU
// path's GemmVariant::automatic runs the candidate measured fastest for the product's
// shape class (key below) on this device and driver, measuring the candidates on
// scratch operands the first time a class is met (a few replays each) and keeping the
// choice on disk. The candidates are the variants whose results agree within the
// tolerances of tests/engine/vk/gemm_variants_test.cpp: the tilings always, the matrix
// units only for float16 operands (whose products they compute exactly in float32).
std::vector<GemmVariant> gemm_tuning_candidates(const BufferSlice& a, const BufferSlice& b, const Device& device);
// "gemm m4096 n4096 k4096 Bt f16": m, n and k rounded up to powers of two, the
// transposes, a batch, and float16 operands.
std::string gemm_tuning_key(const GemmArgs& args, const BufferSlice& a, const BufferSlice& b);

// For kernels that include shaders/epilogue.glsl: its specialization constants (ids
// 20-23), its two bindings (the bias, then the residual or gate; `dummy`, any slice,
// stands in for one the epilogue does not use), and the checks gemm() makes of an
// epilogue for n columns and a C of `c_elements` (Error(invalid_argument) naming what
// is wrong).
void add_gemm_epilogue_constants(std::vector<SpecConstant>& constants, const GemmEpilogue& epilogue);
BufferSlice epilogue_bias_binding(const GemmEpilogue& epilogue, const BufferSlice& dummy);
BufferSlice epilogue_extra_binding(const GemmEpilogue& epilogue, const BufferSlice& dummy);
void check_gemm_epilogue(const GemmEpilogue& epilogue, std::uint64_t n, std::uint64_t c_elements);

// Bytes of scratch memory gemm() needs: on CPU devices the packed operand (none when it
// is read in place and the device binds slices 16-byte aligned) and split-K's partial
// sums; 0 on GPUs.
std::size_t gemm_workspace_bytes(const GemmArgs& args, const Device& device);

// The CPU path's multiply on its own, for callers that pack their own operand
// (implicit-GEMM convolution packs patches straight from the image):
// C = alpha * X . Y + beta * C, X (m x k) read in place at
// x[x_offset + b * x_batch + r * x_row + k * x_k], Y (k x n) packed by the caller as
// shaders/gemm_pack.comp lays it out, with the panel width and size of gemm_panels(),
// or read in place (y_mode, below), C's element (r, c) of batch b at
// c_offset + b * c_batch + r * c_row + c * c_col.
struct PanelGemm {
  std::uint32_t m = 0, n = 0, k = 0, batch = 1;
  std::uint32_t x_row = 0, x_k = 0, x_batch = 0, x_offset = 0;
  std::uint32_t c_row = 0, c_col = 1, c_batch = 0, c_offset = 0;
  std::uint32_t bias_row = 0, bias_col = 1;  // the epilogue's bias index: row * bias_row + col * bias_col
  bool shared_y = false;  // one packed Y for every batch
  float alpha = 1.0f, beta = 0.0f;
  // Y in place of packed panels (shaders/gemm_regblock.comp's kBMode): element (k, c) of
  // batch b at y_offset + b * y_batch + k * y_ld + c (y_mode 1, n a multiple of 4) or
  // + c * y_ld + k (y_mode 2); y_ld, y_batch and y_offset multiples of 4, the slice
  // 16-byte aligned (gemm_y_in_place says which layouts qualify). 0: packed.
  std::uint32_t y_mode = 0, y_ld = 0, y_batch = 0, y_offset = 0;
};
// The y_mode (0: none) that reads Y, with element (k, c) of batch b at
// y[b * batch_stride + k * stride_k + c * stride_n], in place for a product of n columns.
std::uint32_t gemm_y_in_place(const BufferSlice& y, std::uint32_t n, std::uint32_t stride_n, std::uint32_t stride_k,
                              std::uint32_t batch_stride);
struct GemmPanels {
  std::uint32_t rows = 16, cols = 4;  // gemm_regblock's blocking: rows of C per workgroup, vec4s per lane
  std::uint32_t width = 128;          // columns of Y per panel
  std::uint32_t k_groups = 0;         // K padded to a multiple of 4, over 4
  std::uint64_t floats = 0;           // one packed batch of Y
  std::uint32_t batches = 1;          // packed batches
  std::uint64_t bytes() const;        // the workspace Y takes (at least 16)
};
GemmPanels gemm_panels(const PanelGemm& g);
// Runs of 4 k that each workgroup of a packing kernel walks: a few hundred workgroups
// in all (each costs about a microsecond on lavapipe). Launch: (ceil(k_groups / chunk),
// panel_count, batches).
std::uint32_t gemm_pack_chunk(const GemmPanels& panels, std::uint32_t panel_count);
// What gemm_packed reads and writes: X, Y packed in panels, and C.
struct PackedOperands {
  BufferSlice x, packed_y, c;
};
void gemm_packed(Recording& recording, const PanelGemm& g, const GemmPanels& panels, const PackedOperands& operands,
                 const GemmEpilogue& epilogue = {});

// Whether the CPU path runs this product as C^T = op(B)^T op(A)^T (when C is narrow),
// for benchmarks to report and tests to cover both orientations.
bool gemm_cpu_transposes(const GemmArgs& args);
// Parts of K the CPU path splits this product into (1: none): a narrow product with a
// long K runs as a batch of products over equal parts of K and a reduction of their
// partial sums (one product, beta 0, packed C, no epilogue).
std::uint32_t gemm_cpu_splits(const GemmArgs& args, const Device& device);
// How the CPU path reads the operand it would otherwise pack (PanelGemm::y_mode; 0:
// packs it) when the operands' slices start 16-byte aligned, as the arena places them.
std::uint32_t gemm_cpu_y_mode(const GemmArgs& args, const Device& device);

// What gemm() reads and writes: A, B, C, and a workspace of at least
// gemm_workspace_bytes() bytes.
struct GemmOperands {
  BufferSlice a, b, c, workspace;
};
// Records C = alpha * op(A) op(B) + beta * C. Throws Error(invalid_argument) when a slice
// is too small for the shapes and strides, or a row stride is shorter than its row.
void gemm(Recording& recording, const GemmArgs& args, const GemmOperands& operands, const GemmEpilogue& epilogue = {});

}  // namespace vkp::vk
