#include "dataflow/lmdb_data.h"

#include <fmt/format.h>
#include <lmdb.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "core/error.h"
#include "dataflow/internal/datapoint_codec.h"
#include "dataflow/permutation.h"

namespace vkp::dataflow {
namespace {

// tensorpack's list of keys, which LMDBData lists itself (and tensorpack can too).
constexpr std::string_view kKeysKey = "__keys__";
// The map a database is written into at first, doubled whenever a transaction finds it
// full. Not a fixed 1-2 TiB (tensorpack's): a map that large is address space that
// ThreadSanitizer's builds, and machines with a low `ulimit -v`, cannot give, and LMDB
// stores the size in the file, so every reader would ask for it again.
constexpr std::size_t kFirstMapBytes = std::size_t{32} << 20;

void check(int rc, const std::filesystem::path& path, const char* what) {
  if (rc != MDB_SUCCESS) throw Error(ErrorCode::io, fmt::format("{}: {}: {}", path.string(), what, mdb_strerror(rc)));
}

MDB_val val_of(std::string_view bytes) { return {bytes.size(), const_cast<char*>(bytes.data())}; }
std::string_view view_of(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

// An environment opened on one file, closed when it goes.
// A map of `map_bytes`: a writer's, or a reader's the size of the file (LMDB takes the
// size the file's data needs where that is more, never the size stored in the file).
struct Env {
  MDB_env* env = nullptr;
  Env(const std::filesystem::path& path, unsigned flags, std::size_t map_bytes) {
    check(mdb_env_create(&env), path, "cannot create an LMDB environment");
    // MDB_NOSUBDIR: one file, no directory; MDB_NOLOCK: no lock file beside it (one
    // writer, then readers of the finished file); MDB_NOTLS: a read transaction may move
    // between threads, as a flow does from its constructor to its reader.
    int rc = mdb_env_set_mapsize(env, map_bytes);
    if (rc == MDB_SUCCESS) rc = mdb_env_open(env, path.c_str(), flags | MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOTLS, 0644);
    if (rc != MDB_SUCCESS) {
      mdb_env_close(env);
      env = nullptr;
      check(rc, path, "cannot open the LMDB file");
    }
  }
  ~Env() {
    if (env) mdb_env_close(env);
  }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
};

std::string key_of(std::size_t i) { return fmt::format("{:08}", i); }

class SerializedLMDBData : public LMDBData {
 public:
  using LMDBData::LMDBData;

 protected:
  Datapoint decode(const std::string& key, std::span<const std::uint8_t> value) const override {
    try {
      return decode_datapoint(value);
    } catch (const Error& e) {
      throw Error(ErrorCode::bad_data, path().string() + ": key " + key + ": " + e.what());
    }
  }
};

}  // namespace

// A read-only environment, its database and one read transaction kept for the flow's life.
struct LMDBData::Handles {
  Env env;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  explicit Handles(const std::filesystem::path& path) : env(path, MDB_RDONLY, std::filesystem::file_size(path)) {
    check(mdb_txn_begin(env.env, nullptr, MDB_RDONLY, &txn), path, "cannot begin a read transaction");
    const int rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
    if (rc != MDB_SUCCESS) mdb_txn_abort(txn);
    check(rc, path, "cannot open the database");
  }
  ~Handles() { mdb_txn_abort(txn); }
};

LMDBData::LMDBData(std::filesystem::path path, bool shuffle, std::uint64_t seed)
    : path_(std::move(path)), shuffle_(shuffle), seed_(seed), rng_(seed) {
  if (!std::filesystem::is_regular_file(path_))
    throw Error(ErrorCode::io, path_.string() + ": no such LMDB file (one file, as tensorpack's subdir=False)");
  db_ = std::make_unique<Handles>(path_);
  MDB_val key{}, value{};
  MDB_cursor* raw = nullptr;
  check(mdb_cursor_open(db_->txn, db_->dbi, &raw), path_, "cannot open a cursor");
  const std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> cursor(raw, mdb_cursor_close);  // closed if listing throws
  int rc = mdb_cursor_get(raw, &key, &value, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(raw, &key, &value, MDB_NEXT))
    if (view_of(key) != kKeysKey) keys_.emplace_back(view_of(key));
  if (rc != MDB_NOTFOUND) check(rc, path_, "cannot list the keys");
}

LMDBData::~LMDBData() = default;

void LMDBData::on_reset_state() { rng_ = Rng(seed_); }

void LMDBData::on_start_epoch() {
  position_ = 0;
  if (shuffle_) order_ = random_permutation(keys_.size(), rng_);
}

std::optional<Datapoint> LMDBData::on_next() {
  if (position_ == keys_.size()) return std::nullopt;
  const std::string& name = keys_[shuffle_ ? order_[position_] : position_];
  ++position_;
  MDB_val key = val_of(name), value{};
  const int rc = mdb_get(db_->txn, db_->dbi, &key, &value);
  check(rc, path_, "cannot read a value");
  return decode(name, {static_cast<const std::uint8_t*>(value.mv_data), value.mv_size});
}

Datapoint LMDBData::decode(const std::string& key, std::span<const std::uint8_t> value) const {
  Array k = Array::uninitialized(DType::u8, Shape{static_cast<std::int64_t>(key.size())});
  if (!key.empty()) std::memcpy(k.bytes().data(), key.data(), key.size());
  Array v = Array::uninitialized(DType::u8, Shape{static_cast<std::int64_t>(value.size())});
  if (!value.empty()) std::memcpy(v.bytes().data(), value.data(), value.size());
  return {std::move(k), std::move(v)};
}

std::size_t LMDBSerializer::save(DataFlow& df, const std::filesystem::path& path, std::size_t write_frequency) {
  if (write_frequency == 0) throw Error(ErrorCode::invalid_argument, "LMDBSerializer::save: write_frequency is 0");
  if (!df.is_reset()) df.reset_state();
  const std::filesystem::path temp = path.string() + ".tmp." + std::to_string(::getpid());
  std::filesystem::remove(temp);
  std::size_t count = 0;
  try {
    std::size_t map_bytes = kFirstMapBytes;
    Env env(temp, 0, map_bytes);
    // The open transaction's values, kept to be written again into a larger map when
    // LMDB finds the map full (the transaction is lost then).
    std::vector<std::vector<std::uint8_t>> batch;
    const auto flush = [&] {
      for (;;) {
        MDB_txn* txn = nullptr;
        check(mdb_txn_begin(env.env, nullptr, 0, &txn), temp, "cannot begin a write transaction");
        MDB_dbi dbi = 0;
        int rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
        for (std::size_t i = 0; i < batch.size() && rc == MDB_SUCCESS; ++i) {
          const std::string k = key_of(count - batch.size() + i);
          MDB_val key = val_of(k), value = val_of({reinterpret_cast<const char*>(batch[i].data()), batch[i].size()});
          rc = mdb_put(txn, dbi, &key, &value, 0);
        }
        if (rc == MDB_SUCCESS)
          rc = mdb_txn_commit(txn);  // committed or, on failure, freed by LMDB
        else
          mdb_txn_abort(txn);
        if (rc != MDB_MAP_FULL) {
          check(rc, temp, "cannot write");
          break;
        }
        map_bytes *= 2;
        check(mdb_env_set_mapsize(env.env, map_bytes), temp, "cannot enlarge the map");
      }
      batch.clear();
    };
    for (const Datapoint& dp : df.epoch()) {
      batch.emplace_back();
      encode_datapoint(dp, batch.back());
      if (++count % write_frequency == 0) flush();
    }
    flush();  // the rest, or an empty database
    check(mdb_env_sync(env.env, 1), temp, "cannot sync");
  } catch (...) {
    std::filesystem::remove(temp);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp);
    throw Error(ErrorCode::io, "cannot rename " + temp.string() + " to " + path.string() + ": " + ec.message());
  }
  return count;
}

std::unique_ptr<DataFlow> LMDBSerializer::load(const std::filesystem::path& path, bool shuffle, std::uint64_t seed) {
  return std::make_unique<SerializedLMDBData>(path, shuffle, seed);
}

}  // namespace vkp::dataflow
