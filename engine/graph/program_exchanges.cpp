#include "engine/graph/program_exchanges.h"

#include <fmt/format.h>

#include <cstring>

#include "core/error.h"

namespace vkp::graph {

void ProgramExchanges::check(int e, bool pending, const char* call) const {
  if (!pending) throw Error(ErrorCode::invalid_argument, fmt::format("{}({}) without a submitted run", call, e));
  if (e != next_ || e >= count())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}({}): the run is at exchange {} of {}", call, e, next_, count()));
}

void ProgramExchanges::read(int e, Array& value) const {
  const Point& x = point(e);
  copy_value(x.type, x.input, value);
}

int ProgramExchanges::write(int e, const Array& value) {
  const Point& x = point(e);
  if (!has_type(value, x.type))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("exchange {} takes {}, got {}", e, to_string(x.type), describe(value)));
  std::memcpy(x.value, value.bytes().data(), value.nbytes());
  return ++next_;
}

}  // namespace vkp::graph
