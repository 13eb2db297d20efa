// Datasets in NumPy's .npz files: NpzData reads the rows of arrays that share a leading
// extent (Keras's mnist.npz: x_train [60000, 28, 28] and y_train [60000]), and
// NumpySerializer writes a dataflow's epoch as such arrays and reads them back
// (tensorpack's NumpySerializer, without its pickled object arrays: np.load reads
// vkpack's files with allow_pickle=False).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

// Datapoint i is {arrays[keys[0]][i], arrays[keys[1]][i], ...}: the keys' arrays must
// have the same leading extent (Error(bad_data) naming them otherwise); an unknown key is
// Error(not_found) listing the file's arrays. The arrays are held in memory. In order,
// or shuffled per epoch from `seed`.
class NpzData : public DataFlow {
 public:
  NpzData(const std::string& path, std::vector<std::string> keys, bool shuffle = false, std::uint64_t seed = 0);
  // The same over arrays already in memory; `what` names them in errors.
  NpzData(std::map<std::string, Array> arrays, std::vector<std::string> keys, bool shuffle, std::uint64_t seed,
          const std::string& what);

  std::optional<std::size_t> size() const override { return rows_; }

 protected:
  void on_reset_state() override { rng_ = Rng(seed_); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::vector<Array> columns_;  // by key
  std::size_t rows_ = 0;
  bool shuffle_;
  std::uint64_t seed_;
  Rng rng_{0};
  std::vector<std::size_t> order_;
  std::size_t position_ = 0;
};

struct NumpySerializer {
  // One epoch of `df` (reset_state() called here), component c of every datapoint stacked
  // into an array named keys[c] (default arr_0, arr_1, ...: np.savez's names), written
  // to `path` as an .npz. Datapoints must agree in components, shapes and dtypes.
  static void save(DataFlow& df, const std::string& path, std::vector<std::string> keys = {});
  // NpzData over every array of `path` in key order arr_0, arr_1, ... (or `keys`).
  static DataFlowPtr load(const std::string& path, bool shuffle = true, std::uint64_t seed = 0,
                          std::vector<std::string> keys = {});
};

}  // namespace vkp::dataflow
