// tf.train.Example, the message a TensorFlow dataset stores one of per TFRecord record
// (tensorflow/core/example/example.proto and feature.proto), encoded and decoded by hand
// as callbacks/monitors/internal/event_proto.h does TensorBoard's events, so that data loading
// needs no protobuf library. The messages:
//
//   message Example   { Features features = 1; }
//   message Features  { map<string, Feature> feature = 1; }  // entry: string key = 1; Feature value = 2
//   message Feature   { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
//                                    Int64List int64_list = 3; } }
//   message BytesList { repeated bytes value = 1; }
//   message FloatList { repeated float value = 1 [packed = true]; }
//   message Int64List { repeated int64 value = 1 [packed = true]; }
//
// Decoding takes the lists packed or not (a parser must), skips fields it does not know,
// and keeps the last of a repeated map key, as protobuf's parsers do.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace vkp::dataflow {

struct TFFeature {
  enum class Kind { none, bytes, floats, int64s };
  Kind kind = Kind::none;  // none: a Feature with no list set
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<std::int64_t> int64s;
};

using TFExample = std::map<std::string, TFFeature, std::less<>>;

// The Example's bytes, features in key order.
std::string encode_example(const TFExample& example);
// Error(bad_data) saying what is malformed (a varint or a length running past its
// message, a wire type the field cannot have, a packed list of odd length).
TFExample decode_example(std::string_view bytes);

}  // namespace vkp::dataflow
