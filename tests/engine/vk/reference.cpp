#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vkp::test {

void gemm_reference(const vk::GemmArgs& args, const std::vector<float>& a, const std::vector<float>& b,
                    std::vector<double>& c, std::vector<double>& magnitude) {
  const std::uint64_t m = args.m, n = args.n, k = args.k;
  const std::uint64_t lda = args.lda.value_or(args.trans_a ? m : k), ldb = args.ldb.value_or(args.trans_b ? k : n),
                      ldc = args.ldc.value_or(n);
  const std::uint64_t sa = args.stride_a.value_or((args.trans_a ? k : m) * lda),
                      sb = args.stride_b.value_or((args.trans_b ? n : k) * ldb), sc = args.stride_c.value_or(m * ldc);
  magnitude.assign(c.size(), -1.0);
  for (std::uint64_t batch = 0; batch < args.batch; ++batch)
    for (std::uint64_t i = 0; i < m; ++i)
      for (std::uint64_t j = 0; j < n; ++j) {
        double sum = 0, mag = 0;
        for (std::uint64_t p = 0; p < k; ++p) {
          const double x = a[batch * sa + (args.trans_a ? p * lda + i : i * lda + p)];
          const double y = b[batch * sb + (args.trans_b ? j * ldb + p : p * ldb + j)];
          sum += x * y;
          mag += std::abs(x * y);
        }
        double& out = c[batch * sc + i * ldc + j];
        mag = std::abs(args.alpha) * mag + (args.beta != 0 ? std::abs(args.beta * out) : 0.0);
        out = args.alpha * sum + (args.beta != 0 ? args.beta * out : 0.0);
        magnitude[batch * sc + i * ldc + j] = mag;
      }
}

double unary_reference(vk::UnaryOp op, double x) {
  switch (op) {
    case vk::UnaryOp::relu: return std::max(x, 0.0);
    case vk::UnaryOp::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case vk::UnaryOp::tanh: return std::tanh(x);
    case vk::UnaryOp::exp: return std::exp(x);
    case vk::UnaryOp::log: return std::log(x);
    case vk::UnaryOp::sqrt: return std::sqrt(x);
    case vk::UnaryOp::rsqrt: return 1.0 / std::sqrt(x);
    case vk::UnaryOp::neg: return -x;
    case vk::UnaryOp::abs: return std::abs(x);
    case vk::UnaryOp::square: return x * x;
    case vk::UnaryOp::leaky_relu: return x > 0 ? x : 0.2 * x;
    case vk::UnaryOp::elu: return x > 0 ? x : std::expm1(x);
    case vk::UnaryOp::gelu: return x * 0.5 * std::erfc(-x / std::sqrt(2.0));
    case vk::UnaryOp::floor: return std::floor(x);
    case vk::UnaryOp::round: return std::nearbyint(x);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double binary_reference(vk::BinaryOp op, double x, double y) {
  switch (op) {
    case vk::BinaryOp::add: return x + y;
    case vk::BinaryOp::sub: return x - y;
    case vk::BinaryOp::mul: return x * y;
    case vk::BinaryOp::div: return x / y;
    case vk::BinaryOp::max: return std::max(x, y);
    case vk::BinaryOp::min: return std::min(x, y);
    case vk::BinaryOp::pow: return std::pow(x, y);
    default: break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> broadcast_reference(vk::BinaryOp op, const Shape& a_shape, const std::vector<float>& a,
                                        const Shape& b_shape, const std::vector<float>& b) {
  const Shape out = broadcast_shapes(a_shape, b_shape);
  const int rank = out.rank();
  std::vector<double> c(static_cast<std::size_t>(out.numel()));
  std::vector<std::int64_t> index(static_cast<std::size_t>(rank), 0);
  for (std::size_t flat = 0; flat < c.size(); ++flat) {
    // index = unravel(flat) over `out`; then each operand's own offset.
    std::int64_t rest = static_cast<std::int64_t>(flat);
    for (int d = rank - 1; d >= 0; --d) {
      index[static_cast<std::size_t>(d)] = rest % out[d];
      rest /= out[d];
    }
    auto offset = [&](const Shape& s) {
      std::int64_t at = 0;
      for (int d = 0; d < s.rank(); ++d) {
        const std::int64_t i = s[d] == 1 ? 0 : index[static_cast<std::size_t>(d + rank - s.rank())];
        at = at * s[d] + i;
      }
      return static_cast<std::size_t>(at);
    };
    c[flat] = binary_reference(op, a[offset(a_shape)], b[offset(b_shape)]);
  }
  return c;
}

std::vector<double> reduce_reference(vk::ReduceOp op, std::uint32_t outer, std::uint32_t axis, std::uint32_t inner,
                                     const std::vector<float>& x) {
  std::vector<double> y(std::size_t{outer} * inner);
  for (std::uint32_t o = 0; o < outer; ++o)
    for (std::uint32_t i = 0; i < inner; ++i) {
      double acc = op == vk::ReduceOp::max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (std::uint32_t a = 0; a < axis; ++a) {
        const double v = x[(std::size_t{o} * axis + a) * inner + i];
        acc = op == vk::ReduceOp::max ? std::max(acc, v) : acc + v;
      }
      if (op == vk::ReduceOp::mean) acc /= axis;
      y[std::size_t{o} * inner + i] = acc;
    }
  return y;
}

ConvReference conv_reference(const vk::ConvPush& g, std::uint32_t cout, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& dy) {
  const std::uint32_t cg = g.c / g.groups, coutg = cout / g.groups;
  ConvReference r;
  r.out.assign(std::size_t{g.n} * g.oh * g.ow * cout, 0.0);
  r.out_mag = r.out;
  r.dx.assign(x.size(), 0.0);
  r.dx_mag = r.dx;
  r.dw.assign(w.size(), 0.0);
  r.dw_mag = r.dw;
  for (std::uint32_t b = 0; b < g.n; ++b)
    for (std::uint32_t oy = 0; oy < g.oh; ++oy)
      for (std::uint32_t ox = 0; ox < g.ow; ++ox)
        for (std::uint32_t i = 0; i < g.kh; ++i)
          for (std::uint32_t j = 0; j < g.kw; ++j) {
            const long y = long(oy * g.stride_h + i * g.dilation_h) - long(g.pad_top);
            const long xx = long(ox * g.stride_w + j * g.dilation_w) - long(g.pad_left);
            if (y < 0 || y >= long(g.h) || xx < 0 || xx >= long(g.w)) continue;
            for (std::uint32_t co = 0; co < cout; ++co) {
              const std::uint32_t grp = co / coutg;
              const std::size_t o = ((std::size_t{b} * g.oh + oy) * g.ow + ox) * cout + co;
              for (std::uint32_t ci = 0; ci < cg; ++ci) {
                const std::size_t xi =
                    ((std::size_t{b} * g.h + std::size_t(y)) * g.w + std::size_t(xx)) * g.c + grp * cg + ci;
                const std::size_t wi = ((std::size_t{i} * g.kw + j) * cg + ci) * cout + co;
                r.out[o] += double(x[xi]) * w[wi];
                r.out_mag[o] += std::abs(double(x[xi]) * w[wi]);
                r.dx[xi] += double(dy[o]) * w[wi];
                r.dx_mag[xi] += std::abs(double(dy[o]) * w[wi]);
                r.dw[wi] += double(x[xi]) * dy[o];
                r.dw_mag[wi] += std::abs(double(x[xi]) * dy[o]);
              }
            }
          }
  return r;
}

const char* name_of(vk::ConvProduct product) {
  switch (product) {
    case vk::ConvProduct::forward: return "forward";
    case vk::ConvProduct::filter_gradient: return "filter gradient";
    case vk::ConvProduct::input_gradient: return "input gradient";
  }
  return "";
}

}  // namespace vkp::test
