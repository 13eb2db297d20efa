#include "callbacks/pictures.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "callbacks/monitors.h"
#include "callbacks/summary.h"
#include "core/error.h"
#include "core/image_file.h"
#include "core/log.h"
#include "engine/graph/grad_proc.h"

namespace vkp::callbacks {

DumpTensorAsImage::DumpTensorAsImage(std::string tensor, std::string prefix, int rows, int cols, float scale,
                                     float offset)
    : tensor_(std::move(tensor)), prefix_(std::move(prefix)), rows_(rows), cols_(cols), scale_(scale), offset_(offset) {
  if (prefix_.empty()) {
    prefix_ = tensor_;
    for (char& c : prefix_)
      if (c == '/') c = '-';
  }
  chief_only_ = true;
}

void DumpTensorAsImage::on_setup_graph() {
  const graph::Tensor t = trainer().graph().find(tensor_);
  if (t.rank() != 3 && t.rank() != 4)
    throw Error(ErrorCode::invalid_argument, "DumpTensorAsImage: " + tensor_ + " is " + graph::to_string(t.type()) +
                                                 "; it takes images [N, H, W] or [N, H, W, C]");
}

std::vector<graph::Tensor> DumpTensorAsImage::on_fetches() { return {trainer().graph().find(tensor_)}; }

void DumpTensorAsImage::on_after_run(std::span<const Array> values) {
  last_ = values[0];
  have_ = true;
}

void DumpTensorAsImage::on_trigger() {
  if (!have_) return;
  Array images = last_;
  if (images.dtype() == DType::f32 && (scale_ != 1.0f || offset_ != 0.0f))
    for (float& v : images.data<float>()) v = v * scale_ + offset_;
  const auto n = static_cast<int>(images.shape()[0]);
  int rows = rows_, cols = cols_;
  if (cols <= 0) cols = rows > 0 ? (n + rows - 1) / rows : static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
  if (rows <= 0) rows = (n + cols - 1) / cols;
  const Array grid = vkp::image_grid(images, rows, cols);
  trainer().monitors().put_image(tensor_, grid);
  if (trainer().logger_dir().empty()) return;
  last_written_ = (std::filesystem::path(trainer().logger_dir()) /
                   (prefix_ + "-" + std::to_string(trainer().global_step()) + ".png"))
                      .string();
  vkp::write_png(last_written_, grid);
  log_info("DumpTensorAsImage: {} ({} images) written to {}", tensor_, n, last_written_);
}

using graph::root_mean_square;

void ActivationSummaries::on_setup_graph() { tensors_ = activation_summaries(trainer().graph()); }

void GradientSummaries::on_setup_graph() { tensors_ = trainer().graph().collection(graph::kGradientSummaries); }

void GradientSummaries::on_after_epoch_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const std::string& name = tensors_[i].name();  // "<variable>-grad"
    const std::string variable = name.ends_with("-grad") ? name.substr(0, name.size() - 5) : name;
    trainer().monitors().put_histogram(name, values[i].data<float>());
    trainer().monitors().put_scalar(variable + "/rms", root_mean_square(values[i].data<float>()));
  }
}

void ActivationSummaries::on_after_epoch_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const std::span<const float> v = values[i].data<float>();
    const auto zeros = static_cast<double>(std::count(v.begin(), v.end(), 0.0f));
    const std::string prefix = "activation-summary/" + tensors_[i].name();
    trainer().monitors().put_histogram(prefix + "-histogram", v);
    trainer().monitors().put_scalar(prefix + "-sparsity", v.empty() ? 0.0 : zeros / static_cast<double>(v.size()));
    trainer().monitors().put_scalar(prefix + "-rms", root_mean_square(v));
  }
}

void ParamHistograms::on_setup_graph() {
  std::vector<std::regex> res;
  for (const std::string& p : patterns_) res.emplace_back(p);
  for (const graph::Tensor& v : trainer().graph().variables()) {
    const std::string& name = std::get<graph::VariableAttrs>(v.node().attrs).var_name;
    for (const std::regex& re : res)
      if (std::regex_match(name, re)) {
        names_.push_back(name);
        break;
      }
  }
  if (names_.empty()) log_warn("ParamHistograms: no variable matches the patterns given");
}

void ParamHistograms::on_trigger() {
  if (names_.empty()) return;
  const std::vector<Array> values = trainer().variable_values(names_);
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const auto v = values[i].data<float>();
    trainer().monitors().put_histogram("param-summary/" + names_[i], v);
    trainer().monitors().put_scalar("param-summary/" + names_[i] + "-rms", root_mean_square(v));
  }
}

}  // namespace vkp::callbacks
