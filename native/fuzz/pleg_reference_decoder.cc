// See pleg_reference_decoder.h.
#include "pleg_reference_decoder.h"

#include "../src/pleg_wire.h"

namespace kts {
namespace pleg {
namespace {

// Every message's fields through Next() and Msg::Apply(), then Msg::End(out...).
template <class Msg, class... Out>
bool DecodeAll(const uint8_t* buf, size_t len, std::string* error, Out... out) {
  const wire::Src src{len ? buf : wire::kEmpty, error};
  typename Msg::Where where;
  size_t pos = 0, index = 0;
  wire::Field f, g;
  while (pos < len) {
    if (!wire::Next(src, pos, len, f, where.top)) return false;
    if (f.num != 1) continue;  // the repeated message is field 1
    if (!wire::Expect(src, f, 2, where.top)) return false;
    where.At(index++);
    Msg m(Hash(std::string_view(), kIdSeed));
    for (size_t p = f.start; p < f.end;) {
      if (!wire::Next(src, p, f.end, g, where.ctx) || !m.Apply(src, g, where)) return false;
    }
    m.End(out...);
  }
  return true;
}

}  // namespace

bool DecodeSandboxes(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error) {
  return DecodeAll<wire::SandboxMsg>(buf, len, error, out);
}

bool DecodeContainers(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error) {
  return DecodeAll<wire::ContainerMsg>(buf, len, error, out, counts);
}

}  // namespace pleg
}  // namespace kts
