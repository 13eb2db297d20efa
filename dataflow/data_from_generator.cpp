#include "dataflow/data_from_generator.h"

namespace vkp::dataflow {

DataFromGenerator::DataFromGenerator(std::function<Generator()> make_generator,
                                     std::optional<std::size_t> size)
    : make_generator_(std::move(make_generator)), size_(size) {
  require(static_cast<bool>(make_generator_), ErrorCode::invalid_argument,
          "DataFromGenerator: the generator factory is empty");
}

void DataFromGenerator::on_start_epoch() {
  generator_ = make_generator_();
  require(static_cast<bool>(generator_), ErrorCode::invalid_argument,
          "DataFromGenerator: the factory returned an empty generator");
}

std::optional<Datapoint> DataFromGenerator::on_next() { return generator_(); }

}  // namespace vkp::dataflow
