// ONNX export (tensorpack's ModelExporter): a model's inference graph with its weights
// as an .onnx file, so that a model trained here runs in ONNX Runtime, TensorRT,
// OpenVINO, ncnn, OpenCV's dnn module or a browser. Built where Debian's libonnx-dev is
// found (VKPACK_HAVE_ONNX; CMake option VKPACK_WITH_ONNX).
//
//   vkp::train::OfflinePredictor predictor(model, "train_log/", device, {"input"}, {"logits"});
//   vkp::train::export_onnx(predictor, "model.onnx");
//
// The file has the predictor's inputs (placeholders, in vkpack's layouts: images NHWC)
// and outputs by their vkpack names, a dynamic batch dimension ("batch") where the graph
// leaves the first extent unknown, and every part that does not depend on an input
// folded into initializers named after their variables ("conv0/W"), computed by the
// predictor's session. Convolutions and pooling run in ONNX's NCHW with transposes only
// where the layout changes. The model passes ONNX's checker and strict shape inference
// before it is written (atomically). An op with no ONNX mapping is an Error(unsupported)
// naming the op and its node; none of the ops of an inference tower built from
// vkpack's layers is one (training-only ops are).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/session.h"

namespace vkp::train {

class OfflinePredictor;

struct OnnxExportOptions {
  std::int64_t opset = 13;
  std::string graph_name = "vkpack";
};

// The subgraph that computes `outputs` from `inputs` (placeholders of the session's
// graph), with every input-free value as the session holds it.
void export_onnx(graph::Session& session, const std::vector<graph::Tensor>& inputs,
                 const std::vector<graph::Tensor>& outputs, const std::string& path, const OnnxExportOptions& options = {});
// The predictor's inference tower, inputs and outputs.
void export_onnx(OfflinePredictor& predictor, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace vkp::train
