// Predictors (tensorpack's predict/): a model's inference tower (BatchNorm moving averages,
// no dropout) with its variables from a checkpoint, as a callable from input arrays to
// output arrays, fed and fetched by the names the tower function gave them.
//   PredictConfig      what a predictor is made of: the model, the checkpoint, the names
//   PredictorBase      the callable; every predictor here is one
//   OfflinePredictor   one device; predict() runs many batches double-buffered
// On several devices and over datasets: multi_predictor.h, dataset_predictor.h.
// Every predictor here is safe to call from several threads: an OfflinePredictor runs one
// call at a time (the others wait), the multi-device ones run their devices in parallel.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"
#include "engine/graph/session.h"
#include "train/model_desc.h"

namespace vkp::vk {
class Device;
}

namespace vkp::train {

struct PredictConfig {
  std::shared_ptr<ModelDesc> model;
  // A checkpoint file, or a log directory (its latest checkpoint). It must hold every
  // variable of the inference tower.
  std::string checkpoint;
  std::vector<std::string> input_names, output_names;
};

class PredictorBase {
 public:
  virtual ~PredictorBase() = default;
  // Outputs (in output_names' order) for inputs (in input_names' order).
  virtual std::vector<Array> operator()(const std::vector<Array>& inputs) = 0;
  // The same for many inputs, results in their order. Overridden where it can do better
  // than one call after another.
  virtual std::vector<std::vector<Array>> predict(std::span<const std::vector<Array>> many);
  virtual const std::vector<std::string>& input_names() const = 0;
  virtual const std::vector<std::string>& output_names() const = 0;
};

class OfflinePredictor : public PredictorBase {
 public:
  OfflinePredictor(const PredictConfig& config, vk::Device& device);
  OfflinePredictor(std::shared_ptr<ModelDesc> model, const std::string& checkpoint, vk::Device& device,
                   const std::vector<std::string>& input_names, const std::vector<std::string>& output_names);

  std::vector<Array> operator()(const std::vector<Array>& inputs) override;
  // Consecutive inputs of the same shapes run through one program with two sets of input
  // buffers: the next batch is written while the device computes this one. The program of
  // each shape seen stays for the predictor's life (a dataset of many shapes holds many).
  std::vector<std::vector<Array>> predict(std::span<const std::vector<Array>> many) override;
  const std::vector<std::string>& input_names() const override { return config_.input_names; }
  const std::vector<std::string>& output_names() const override { return config_.output_names; }

  // What export_onnx writes: the inference tower's session and its fed and fetched
  // tensors. Not guarded: use them while no other thread calls the predictor.
  graph::Session& session() { return *session_; }
  const std::vector<graph::Tensor>& inputs() const { return inputs_; }
  const std::vector<graph::Tensor>& outputs() const { return outputs_; }

 private:
  void check_arity(const std::vector<Array>& inputs) const;

  PredictConfig config_;
  graph::Graph graph_;
  std::unique_ptr<graph::Session> session_;
  std::vector<graph::Tensor> inputs_, outputs_;
  std::mutex mutex_;  // one call at a time
};

}  // namespace vkp::train
