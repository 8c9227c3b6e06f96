// The PLEG relist decoders' reference (fuzz target only, not in the addon): every field read the
// general way (native/src/pleg_wire.h), none of the fast decoders' inline shapes. pleg_fuzz.cc
// checks that the fast decoders RelistDiffer::Diff() uses (native/src/pleg_decode.h) give
// exactly these items, counts and errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../src/pleg_decode.h"

namespace kts {
namespace pleg {

// As DecodeSandboxesFast / DecodeContainersFast (pleg_decode.h).
bool DecodeSandboxes(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error);
bool DecodeContainers(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error);

}  // namespace pleg
}  // namespace kts
