#include "shaders/op_codes.h"

namespace vkp::shaders {

std::string_view to_string(UnaryOp op) {
  constexpr std::string_view names[] = {"relu", "sigmoid", "tanh",       "exp", "log",  "sqrt",  "rsqrt", "neg",
                                        "abs",  "square",  "leaky_relu", "elu", "gelu", "floor", "round"};
  return names[static_cast<std::size_t>(op)];
}

std::string_view to_string(BinaryOp op) {
  constexpr std::string_view names[] = {"add",
                                        "sub",
                                        "mul",
                                        "div",
                                        "max",
                                        "min",
                                        "pow",
                                        "relu_grad",
                                        "sigmoid_grad",
                                        "tanh_grad",
                                        "sqrt_grad",
                                        "rsqrt_grad",
                                        "leaky_relu_grad",
                                        "elu_grad",
                                        "abs_grad",
                                        "greater_equal",
                                        "equal",
                                        "sigmoid_xent",
                                        "sigmoid_xent_grad",
                                        "gelu_grad",
                                        "keep"};
  return names[static_cast<std::size_t>(op)];
}

}  // namespace vkp::shaders
