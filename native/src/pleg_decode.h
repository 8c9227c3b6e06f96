// PLEG relist decoding, the fast skim decoders that RelistDiffer::Diff() uses (pleg.h): from the
// raw ListPodSandboxResponse / ListContainersResponse bytes, only the fields the diff needs, as
// Items viewing the reply (no allocation per container). The common shapes are inline; any other
// shape, and every error, goes through the general path (pleg_wire.h). The fuzz target checks
// them against the reference decoders (native/fuzz/pleg_reference_decoder.h): same items, counts
// and errors. Labels, states and protobuf rules: pleg.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pleg_index.h"

namespace kts {
namespace pleg {

enum State : uint8_t { kRunning = 0, kExited = 1, kUnknown = 2, kNonExistent = 3 };

// Decoded item (sandbox or labelled container), viewing the reply bytes.
struct Item {
  std::string_view id, uid, name, ns;
  uint64_t hash;        // Hash(id, kIdSeed) (pleg_hash.h)
  uint8_t state;        // State
  uint8_t cri_state;    // containers: 0 created, 1 running, 2 exited, 3 unknown; sandboxes: 0 ready
  uint32_t pod;         // set by the diff
};

// Append the labelled items (hash set, pod not) and count the containers by CRI state. False:
// *error says what is malformed and where (items may have been appended).
bool DecodeSandboxesFast(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error);
bool DecodeContainersFast(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error);

}  // namespace pleg
}  // namespace kts
