#include "dataflow/batch_data.h"

#include <algorithm>
#include <cstring>

namespace vkp::dataflow {
namespace {

// Bytes of batch arrays allocated at once before the stacker grows them as rows come.
constexpr std::size_t kFirstAllocationBytes = std::size_t{16} << 20;

// "f32[2]": a row's dtype and shape, of a datapoint's component or a batch's row.
std::string describe_row(DType dtype, const Shape& row) { return std::string(to_string(dtype)) + to_string(row); }

Shape row_shape(const Array& a, bool stacked) {
  if (!stacked) return a.shape();
  return Shape(std::vector<std::int64_t>(a.shape().dims().begin() + 1, a.shape().dims().end()));
}

bool same_row(const Array& row_source, bool stacked, const Array& batch) {
  if (row_source.dtype() != batch.dtype()) return false;
  const std::vector<std::int64_t>& a = row_source.shape().dims();
  const std::vector<std::int64_t>& b = batch.shape().dims();
  const std::size_t skip = stacked ? 1 : 0;
  return a.size() - skip == b.size() - 1 && std::equal(a.begin() + static_cast<std::ptrdiff_t>(skip), a.end(), b.begin() + 1);
}

}  // namespace

BatchStacker::BatchStacker(std::size_t capacity, std::string who) : capacity_(capacity), who_(std::move(who)) {
  VKP_CHECK(capacity_ > 0, "a BatchStacker needs room for at least one row");
}

void BatchStacker::check_row(const Datapoint& dp, std::size_t components, bool stacked) const {
  if (components != batch_.size())
    throw Error(ErrorCode::invalid_argument,
                who_ + ": datapoint " + std::to_string(rows_) + " of the batch has " + std::to_string(components) +
                    " components, datapoint 0 has " + std::to_string(batch_.size()) +
                    "; every datapoint of a batch needs the same components");
  for (std::size_t c = 0; c < components; ++c)
    if (!same_row(dp[c], stacked, batch_[c]))
      throw Error(ErrorCode::invalid_argument,
                  who_ + ": component " + std::to_string(c) + " of datapoint " + std::to_string(rows_) +
                      " of the batch is " + describe_row(dp[c].dtype(), row_shape(dp[c], stacked)) +
                      ", datapoint 0 has " + describe_row(batch_[c].dtype(), row_shape(batch_[c], true)) +
                      "; a component must have one shape and dtype across the batch");
}

// Makes room for `more` rows shaped like `dp`'s: allocates the batch at its first row,
// checks later rows against it.
void BatchStacker::reserve_for(const Datapoint& dp, bool stacked, std::size_t more) {
  if (rows_ > 0) {
    check_row(dp, dp.size(), stacked);
  } else if (batch_.empty() || !std::equal(dp.begin(), dp.end(), batch_.begin(), batch_.end(),
                                           [&](const Array& a, const Array& b) { return same_row(a, stacked, b); })) {
    // A new first row: the arrays left from the last batch fit only rows of their shapes.
    batch_.clear();
    row_bytes_.clear();
    allocated_ = 0;
    std::size_t bytes = 0;
    for (const Array& a : dp) {
      const Shape row = row_shape(a, stacked);
      row_bytes_.push_back(static_cast<std::size_t>(row.numel()) * size_of(a.dtype()));
      bytes += row_bytes_.back();
    }
    allocated_ = std::min(capacity_, std::max(more, kFirstAllocationBytes / std::max<std::size_t>(bytes, 1)));
    for (const Array& a : dp) {
      std::vector<std::int64_t> dims{static_cast<std::int64_t>(allocated_)};
      const Shape row = row_shape(a, stacked);
      dims.insert(dims.end(), row.dims().begin(), row.dims().end());
      batch_.push_back(Array::uninitialized(a.dtype(), Shape(std::move(dims))));
    }
  }
  if (rows_ + more <= allocated_) return;
  const std::size_t grown = std::min(capacity_, std::max(rows_ + more, 2 * allocated_));
  for (std::size_t c = 0; c < batch_.size(); ++c) {
    std::vector<std::int64_t> dims = batch_[c].shape().dims();
    dims[0] = static_cast<std::int64_t>(grown);
    Array bigger = Array::uninitialized(batch_[c].dtype(), Shape(std::move(dims)));
    if (rows_ > 0 && row_bytes_[c] > 0) std::memcpy(bigger.bytes().data(), batch_[c].bytes().data(), rows_ * row_bytes_[c]);
    batch_[c] = std::move(bigger);
  }
  allocated_ = grown;
}

void BatchStacker::add(const Datapoint& dp) {
  VKP_CHECK(rows_ < capacity_, "BatchStacker::add on a full batch");
  reserve_for(dp, false, 1);
  for (std::size_t c = 0; c < dp.size(); ++c)
    if (row_bytes_[c]) std::memcpy(batch_[c].bytes().data() + rows_ * row_bytes_[c], dp[c].bytes().data(), row_bytes_[c]);
  ++rows_;
}

void BatchStacker::add_rows(const Datapoint& batch, std::size_t begin, std::size_t end) {
  VKP_CHECK(begin <= end && rows_ + (end - begin) <= capacity_, "BatchStacker::add_rows beyond the batch");
  if (begin == end) return;
  for (const Array& a : batch)
    VKP_CHECK(a.shape().rank() >= 1 && static_cast<std::size_t>(a.shape()[0]) >= end,
              "BatchStacker::add_rows: rows beyond a component's leading axis");
  reserve_for(batch, true, end - begin);
  for (std::size_t c = 0; c < batch.size(); ++c)
    if (row_bytes_[c])
      std::memcpy(batch_[c].bytes().data() + rows_ * row_bytes_[c], batch[c].bytes().data() + begin * row_bytes_[c],
                  (end - begin) * row_bytes_[c]);
  rows_ += end - begin;
}

Datapoint BatchStacker::take() {
  VKP_CHECK(rows_ > 0, "BatchStacker::take on an empty batch");
  Datapoint out;
  if (rows_ == allocated_) {
    out = std::move(batch_);
    batch_.clear();
    row_bytes_.clear();
    allocated_ = 0;
  } else {  // fewer rows than allocated: copy them out and keep the arrays for the next batch
    for (std::size_t c = 0; c < batch_.size(); ++c) {
      std::vector<std::int64_t> dims = batch_[c].shape().dims();
      dims[0] = static_cast<std::int64_t>(rows_);
      Array part = Array::uninitialized(batch_[c].dtype(), Shape(std::move(dims)));
      if (part.nbytes()) std::memcpy(part.bytes().data(), batch_[c].bytes().data(), part.nbytes());
      out.push_back(std::move(part));
    }
  }
  rows_ = 0;
  return out;
}

Datapoint stack_datapoints(const std::vector<Datapoint>& points, const std::string& who) {
  VKP_CHECK(!points.empty(), "stack_datapoints needs at least one datapoint");
  BatchStacker stacker(points.size(), who);
  for (const Datapoint& dp : points) stacker.add(dp);
  return stacker.take();
}

BatchData::BatchData(DataFlowPtr df, std::size_t batch_size, bool remainder)
    : df_(std::move(df)), batch_size_(batch_size), remainder_(remainder), stacker_(std::max<std::size_t>(batch_size, 1), "BatchData") {
  require(df_ != nullptr, ErrorCode::invalid_argument, "BatchData: the dataflow to batch is null");
  require(batch_size_ > 0, ErrorCode::invalid_argument, "BatchData: batch_size must be at least 1, got 0");
}

std::optional<std::size_t> BatchData::size() const {
  const std::optional<std::size_t> n = df_->size();
  if (!n) return std::nullopt;
  return remainder_ ? (*n + batch_size_ - 1) / batch_size_ : *n / batch_size_;
}

void BatchData::on_start_epoch() {
  stacker_.clear();
  df_->start_epoch();
}

std::optional<Datapoint> BatchData::on_next() {
  stacker_.clear();  // rows left by an exception
  while (!stacker_.full()) {
    std::optional<Datapoint> dp = df_->next();
    if (!dp) break;
    stacker_.add(*dp);
  }
  if (stacker_.rows() == 0 || (!stacker_.full() && !remainder_)) {
    stacker_.clear();
    return std::nullopt;
  }
  return stacker_.take();
}

}  // namespace vkp::dataflow
