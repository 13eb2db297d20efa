// PrefetchData: reads a dataflow on a background thread, ahead of the reader, into a
// bounded buffer.
//
// Unlike tensorpack's PrefetchData (several forked copies of the flow), this one keeps
// the flow's exact epochs and order: it is MultiThreadMapData with one thread and no
// function. For several copies of a flow filling one queue, use MultiThreadRunner.
#pragma once

#include "dataflow/multi_thread_map_data.h"

namespace vkp::dataflow {

class PrefetchData : public MultiThreadMapData {
 public:
  // `buffer_size`: datapoints read ahead at most. `chunk`: datapoints read per lock.
  explicit PrefetchData(DataFlowPtr df, std::size_t buffer_size = 64, std::size_t chunk = 1);
};

}  // namespace vkp::dataflow
