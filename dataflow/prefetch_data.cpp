#include "dataflow/prefetch_data.h"

namespace vkp::dataflow {

PrefetchData::PrefetchData(DataFlowPtr df, std::size_t buffer_size, std::size_t chunk)
    : MultiThreadMapData(std::move(df), MapFunction([](Datapoint dp) -> std::optional<Datapoint> { return dp; }),
                         MultiThreadMapOptions{.num_threads = 1, .buffer_size = buffer_size, .ordered = true,
                                               .chunk = chunk, .seed = 0}) {}

}  // namespace vkp::dataflow
