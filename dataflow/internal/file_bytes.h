// Reading a whole file into memory, gunzipping it on the way when it is gzip-compressed
// (plain files are read as they are), for the dataset readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace vkp::dataflow {

// Throws Error(io) when the file cannot be opened or read, Error(bad_data) when its
// gzip stream is corrupt or cut short; messages name the file. With `limit`, at most its
// first `limit` bytes (a header), the rest left unread.
std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path, std::size_t limit = SIZE_MAX);

// The first of `candidates` that exists; Error(io) naming all of them when none does.
// `what` says what the file is ("FashionMnist train images").
std::filesystem::path first_existing(const std::vector<std::filesystem::path>& candidates, const std::string& what);

}  // namespace vkp::dataflow
