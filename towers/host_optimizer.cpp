#include "towers/host_optimizer.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/optimizer_table.h"
#include "engine/graph/session.h"

namespace vkp::towers {
namespace {

bool is_adam(graph::OptimizerKind kind) {
  return kind == graph::OptimizerKind::adam || kind == graph::OptimizerKind::adamw;
}

// Runs body(begin, end) over [0, n) in chunks, on every thread from ~1M elements: below
// that, waking the other threads costs more than the update (see host_average.cpp).
template <class Body>
void for_chunks(std::size_t n, Body&& body) {
  const auto count = static_cast<std::ptrdiff_t>(n);
  constexpr std::ptrdiff_t kChunk = 1 << 14, kParallel = 1 << 20;
#pragma omp parallel for schedule(static) if (count >= kParallel)
  for (std::ptrdiff_t begin = 0; begin < count; begin += kChunk) body(begin, std::min(count, begin + kChunk));
}

}  // namespace

HostOptimizerStep read_host_optimizer_step(graph::Session& session, graph::OptimizerKind kind,
                                           std::uint64_t global_step) {
  return read_host_optimizer_step(kind, global_step,
                                  [&](const std::string& name) { return session.hyperparameter(name); });
}

HostOptimizerStep read_host_optimizer_step(graph::OptimizerKind kind, std::uint64_t global_step,
                                           const std::function<float(const std::string&)>& lookup) {
  HostOptimizerStep step;
  step.kind = kind;
  step.global_step = global_step;
  const graph::OptimizerSpec& spec = graph::optimizer_spec(kind);
  auto read = [&](graph::HyperparameterRole role) {
    const std::string name(spec.hyperparameters[static_cast<std::size_t>(role)]);
    if (name.empty()) return 0.0f;  // a role this kind does not use
    try {
      return lookup(name);
    } catch (const Error& e) {
      throw Error(e.code(), "the host's " + std::string(spec.name) + " update reads hyperparameter '" + name +
                                "' from tower 0: " + e.what());
    }
  };
  using Role = graph::HyperparameterRole;
  step.learning_rate = read(Role::learning_rate);
  step.momentum = read(Role::momentum);
  step.beta2 = read(Role::beta2);
  step.epsilon = read(Role::epsilon);
  step.weight_decay = read(Role::weight_decay);
  return step;
}

namespace {

// One rule each. Every expression is the shader's, operation for operation; the file is
// built with -ffp-contract=off so that no a * b + c becomes a fused multiply-add here.
void sgd(const HostOptimizerStep& p, float* v, const float* g, std::size_t n) {
  const float lr = p.learning_rate;
  for_chunks(n, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
#pragma omp simd
    for (std::ptrdiff_t i = begin; i < end; ++i) v[i] -= lr * g[i];
  });
}

void momentum(const HostOptimizerStep& p, float* v, const float* g, float* m, std::size_t n) {
  const float lr = p.learning_rate, mu = p.momentum;
  const bool nesterov = p.kind == graph::OptimizerKind::nesterov;
  for_chunks(n, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
    if (nesterov) {
#pragma omp simd
      for (std::ptrdiff_t i = begin; i < end; ++i) {
        const float acc = mu * m[i] + g[i];
        m[i] = acc;
        v[i] -= lr * (g[i] + mu * acc);
      }
    } else {
#pragma omp simd
      for (std::ptrdiff_t i = begin; i < end; ++i) {
        const float acc = mu * m[i] + g[i];
        m[i] = acc;
        v[i] -= lr * acc;
      }
    }
  });
}

void adam(const HostOptimizerStep& p, float* v, const float* g, float* m, float* s, std::size_t n) {
  const float lr = p.learning_rate, b1 = p.momentum, b2 = p.beta2, eps = p.epsilon;
  const float step = graph::adam_step_factor(lr, b1, b2, p.global_step + 1);  // as the session writes it
  const float one_b1 = 1.0f - b1, one_b2 = 1.0f - b2;
  const bool adamw = p.kind == graph::OptimizerKind::adamw;
  const float decay = adamw ? lr * p.weight_decay : 0.0f;
  for_chunks(n, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
#pragma omp simd
    for (std::ptrdiff_t i = begin; i < end; ++i) {
      const float grad = g[i];
      const float m1 = b1 * m[i] + one_b1 * grad;
      const float m2 = b2 * s[i] + one_b2 * grad * grad;
      m[i] = m1;
      s[i] = m2;
      const float old = v[i];
      float updated = old - step * m1 / (std::sqrt(m2) + eps);
      // adam subtracts nothing; a branch-free select keeps the loop vectorised.
      updated = adamw ? updated - decay * old : updated;
      v[i] = updated;
    }
  });
}

void rmsprop(const HostOptimizerStep& p, float* v, const float* g, float* m, float* s, std::size_t n) {
  const float lr = p.learning_rate, mu = p.momentum, rho = p.beta2, eps = p.epsilon, one_rho = 1.0f - rho;
  for_chunks(n, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
#pragma omp simd
    for (std::ptrdiff_t i = begin; i < end; ++i) {
      const float grad = g[i];
      const float ms = rho * m[i] + one_rho * grad * grad;
      const float mom = mu * s[i] + lr * grad / std::sqrt(ms + eps);
      m[i] = ms;
      s[i] = mom;
      v[i] -= mom;
    }
  });
}

void adagrad(const HostOptimizerStep& p, float* v, const float* g, float* m, std::size_t n) {
  const float lr = p.learning_rate;
  for_chunks(n, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
#pragma omp simd
    for (std::ptrdiff_t i = begin; i < end; ++i) {
      const float acc = m[i] + g[i] * g[i];
      m[i] = acc;
      v[i] -= lr * g[i] / std::sqrt(acc);
    }
  });
}

}  // namespace

void apply_host_optimizer(const HostOptimizerStep& p, float* v, const float* g, float* m, float* s, std::size_t n) {
  using graph::OptimizerKind;
  VKP_CHECK(p.kind == OptimizerKind::sgd || m != nullptr, "apply_host_optimizer: this optimizer needs slot m");
  VKP_CHECK((!is_adam(p.kind) && p.kind != OptimizerKind::rmsprop) || s != nullptr,
            "apply_host_optimizer: this optimizer needs slot s");
  switch (p.kind) {
    case OptimizerKind::sgd: return sgd(p, v, g, n);
    case OptimizerKind::momentum:
    case OptimizerKind::nesterov: return momentum(p, v, g, m, n);
    case OptimizerKind::adam:
    case OptimizerKind::adamw: return adam(p, v, g, m, s, n);
    case OptimizerKind::rmsprop: return rmsprop(p, v, g, m, s, n);
    case OptimizerKind::adagrad: return adagrad(p, v, g, m, n);
  }
}

}  // namespace vkp::towers
