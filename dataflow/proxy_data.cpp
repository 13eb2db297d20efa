#include "dataflow/proxy_data.h"

#include "core/error.h"

namespace vkp::dataflow {

ProxyDataFlow::ProxyDataFlow(DataFlowPtr df) : df_(std::move(df)) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "ProxyDataFlow: the flow to read is null");
}

}  // namespace vkp::dataflow
