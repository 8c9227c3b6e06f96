// PLEG relist diff hot path: decodes the raw ListPodSandboxResponse and ListContainersResponse
// bytes with a skim decoder (only the fields the diff needs), diffs every (pod, container) state
// against the previous relist (upstream GenericPLEG's podRecords + generateEvents), keeps the new
// relist as the retained state, and packs only the events into a flat output buffer. No N-API
// here: addon.cc converts. The TypeScript twin is src/pleg/relist-differ-ts.ts; both must agree byte
// for byte (events, pods, counts and error messages).
//
// Files: pleg_hash.h (hashing), pleg_wire.{h,cc} (the protobuf field reader, the general path),
// pleg_decode.{h,cc} (the fast skim decoders), pleg_index.{h,cc} (the open-addressing index),
// pleg.{h,cc} (this differ). The reference decoders the fuzz target checks the fast ones against
// are not in the addon: native/fuzz/pleg_reference_decoder.{h,cc}.
//
// Semantics (shared with the twin):
// - A container belongs to the pod named by its io.kubernetes.pod.uid label and must also carry
//   io.kubernetes.container.name; a sandbox needs io.kubernetes.pod.uid. Anything else is
//   foreign and ignored (but still decoded: malformed bytes are an error wherever they are).
// - States: CONTAINER_RUNNING -> running, CONTAINER_EXITED -> exited, anything else -> unknown;
//   a sandbox is running when SANDBOX_READY (the proto3 default, 0), else exited.
// - Records are keyed by (pod uid, id). Within one pod the first container with an id wins, and
//   containers come before sandboxes (upstream getContainerState); later duplicates are ignored.
// - Events per key, old -> new (upstream generateEvents): equal -> none; running ->
//   ContainerStarted; exited -> ContainerDied; unknown -> ContainerChanged; gone ->
//   ContainerRemoved if it was exited, else ContainerDied then ContainerRemoved.
// - Pod name/namespace: the pod's first sandbox in this relist (metadata name/namespace, each
//   falling back to the sandbox's io.kubernetes.pod.name/namespace labels), else its first
//   container's labels; a pod absent from this relist keeps what it had.
// - Counts: labelled containers by CRI state (created/running/exited/unknown, duplicates
//   included); running pods = pods with at least one ready labelled sandbox.
// - Protobuf: proto3 merge rules (last scalar wins, a repeated message field merges, last map
//   entry for a key wins). Enum values are the varint's low 32 bits. Wire types 3/4 (groups),
//   6/7, field number 0, tags above 32 bits, varints over 10 bytes and lengths past the end are
//   errors; a decoded field with the wrong wire type is an error; other fields are skipped.
//
// Cost (bench/pleg-diff.ts; instructions per diff: scripts/callgrind-pleg.sh): a relist is
// decoded into a reused vector of Items viewing the reply (no allocation per container; each
// message's fields walked in the order runtimes write them, pleg_decode.cc), each item's record
// is found in the apply pass through an open-addressing index with the next items' slots and
// records prefetched, and only changes allocate (new records, removed ids kept for KeepPrevious,
// events). Records keep their key inline (two cache lines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pleg_decode.h"
#include "pleg_index.h"

namespace kts {
namespace pleg {

enum EventType : uint8_t { kStarted = 1, kDied = 2, kRemoved = 3, kChanged = 4 };

// Output of a successful Diff() (little-endian):
//   u32 running_pods | u32 created | u32 running | u32 exited | u32 unknown | u32 n_pods |
//   u32 n_events
//   n_pods x   { u32 uid_len | u32 name_len | u32 ns_len | uid | name | namespace }
//   n_events x { u8 type | u32 pod (index into the pods above) | u32 id_len | id }
// Events are sorted by pod uid, then id (bytewise), then emission order (Died before Removed);
// the pods are those with events, in uid order.
constexpr size_t kOutputHeader = 7 * 4;

class RelistDiffer {
 public:
  RelistDiffer() = default;
  RelistDiffer(const RelistDiffer&) = delete;
  RelistDiffer& operator=(const RelistDiffer&) = delete;

  // Decodes both replies and diffs them against the retained state, which becomes this relist.
  // True: Output() holds the result. False: *error says what is malformed and where, and the
  // retained state is exactly as before the call.
  bool Diff(const uint8_t* sandboxes, size_t sandboxes_len, const uint8_t* containers, size_t containers_len,
            std::string* error);
  const std::vector<uint8_t>& Output() const { return out_; }

  // Name and namespace of a pod in the last two relists or with events in the last diff.
  bool PodInfo(std::string_view uid, std::string_view* name, std::string_view* ns) const;
  // Upstream keeps a pod's old record when its inspection failed, so the next relist reports its
  // changes again: puts the pod's records back as they were before the last Diff(). Once per
  // pod per diff; a no-op for a pod without events in the last diff.
  void KeepPrevious(std::string_view uid);
  // Forgets everything: the next Diff() reports every container as new.
  void Reset();

  // Tests and fuzzing.
  bool CheckInvariants(std::string* why) const;
  uint64_t StateDigest() const;
  size_t RecordCount() const { return live_recs_; }

 private:
  // Small string kept inline up to N bytes (container ids are 64 hex digits, pod uids 36
  // characters): a lookup touches one record, not a heap block too.
  template <size_t N>
  class InlineStr {
   public:
    std::string_view view() const { return heap_ ? std::string_view(heap_.get(), len_) : std::string_view(buf_, len_); }
    void assign(std::string_view s) {
      len_ = static_cast<uint32_t>(s.size());
      if (s.size() <= N) {
        heap_.reset();
        if (!s.empty()) memcpy(buf_, s.data(), s.size());
      } else {
        heap_.reset(new char[s.size()]);
        memcpy(heap_.get(), s.data(), s.size());
      }
    }
    void clear() {
      heap_.reset();
      len_ = 0;
    }

   private:
    char buf_[N];
    uint32_t len_ = 0;
    std::unique_ptr<char[]> heap_;
  };

  // A record: one (pod uid, id) of the last relist. The key (id, then uid) is inline when short
  // (container ids are 64 hex digits, pod uids 36 characters), so a record is exactly two cache
  // lines and a lookup touches nothing else.
  struct alignas(64) Rec {
    static constexpr size_t kInline = 103;
    uint32_t pod = HashIndex::kNone;  // kNone: free slot
    uint32_t seen_gen = 0;
    uint32_t id_len = 0, uid_len = 0;
    uint8_t state = kUnknown;
    char inline_key[kInline] = {};
    std::unique_ptr<char[]> heap_key;

    const char* key() const { return heap_key ? heap_key.get() : inline_key; }
    std::string_view id() const { return std::string_view(key(), id_len); }
    std::string_view uid() const { return std::string_view(key() + id_len, uid_len); }
    void SetKey(std::string_view id, std::string_view uid) {
      id_len = static_cast<uint32_t>(id.size());
      uid_len = static_cast<uint32_t>(uid.size());
      char* k = inline_key;
      if (id.size() + uid.size() <= kInline) {
        heap_key.reset();
      } else {
        heap_key.reset(new char[id.size() + uid.size()]);
        k = heap_key.get();
      }
      if (!id.empty()) memcpy(k, id.data(), id.size());
      if (!uid.empty()) memcpy(k + id.size(), uid.data(), uid.size());
    }
    void ClearKey() {
      heap_key.reset();
      id_len = uid_len = 0;
    }
  };
  static_assert(sizeof(Rec) == 128, "a record is two cache lines");

  struct Pod {
    uint64_t hash = 0;  // Hash(uid)
    uint32_t refs = 0;  // live records of the pod
    uint32_t last_seen = 0, info_gen = 0, ready_gen = 0, event_gen = 0;
    uint8_t info_prio = 0;  // in info_gen: 1 from a container, 2 from a sandbox
    bool live = false;
    InlineStr<40> uid;
    std::string name, ns;
  };
  struct Undo {
    uint32_t pod;        // kNone once applied
    uint32_t rec;        // changed or added record; kNone for a removed one
    uint8_t prev;        // State before the diff; kNonExistent: the record was added
    std::string id;      // removed records only
  };
  struct Event {
    uint32_t pod;
    std::string_view id;
    uint8_t type;
    uint32_t seq;
  };

  void Apply(Item* item);
  uint32_t FindRec(const Item& item) const;
  void PrefetchAhead(const Item* items, size_t k, size_t n) const;
  uint32_t FindOrAddPod(std::string_view uid, uint64_t hash);
  uint32_t AddRec(uint32_t pod, std::string_view id, uint64_t hash, uint8_t state, uint32_t seen_gen);
  void EraseRec(uint32_t idx);
  void Emit(uint32_t pod, std::string_view id, uint8_t old_state, uint8_t new_state);
  void SetInfo(Pod* pod, const Item& item, uint8_t prio);
  void BuildOutput(uint32_t running_pods, const uint32_t counts[4]);

  std::vector<Rec> recs_;
  std::vector<uint32_t> free_recs_;
  HashIndex rec_index_;
  size_t live_recs_ = 0;
  std::vector<Pod> pods_;
  std::vector<uint32_t> free_pods_;
  HashIndex pod_index_;
  uint32_t gen_ = 1;
  size_t seen_ = 0;  // records seen in this relist
  std::vector<Undo> undo_;

  // Per-call scratch, kept for its capacity.
  std::vector<Item> sandboxes_, containers_;
  std::vector<Event> events_;
  std::vector<uint32_t> gone_;
  std::vector<uint8_t> out_;
};

}  // namespace pleg
}  // namespace kts
