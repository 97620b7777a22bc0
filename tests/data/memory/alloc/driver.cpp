/*
 * Minimal ExecuTorch C++ driver that records an ETDump carrying allocator and
 * allocation events (RunData.allocators + Event.allocation_event).
 *
 *   driver <model.pte> <n_runs> <out.etdp>
 *
 * Built against the executorch wheel's headers and shared libraries by
 * build_and_record.sh (next to this file); see that script for the exact
 * compiler, flags and versions. Not built or run by the tests.
 *
 * How allocations reach the ETDump:
 *   - The stock MemoryAllocator only reports to the legacy profiler
 *     (EXECUTORCH_TRACK_ALLOCATION, compiled out unless PROFILING_ENABLED), not
 *     to an EventTracer. TracedAllocator is a MemoryAllocator subclass whose
 *     allocate() forwards to MemoryAllocator::allocate() and, on success, calls
 *     EventTracer::track_allocation(id, bytes) where bytes is what the bump
 *     allocator consumed (requested size + alignment padding, i.e. the delta of
 *     used_size() -- the same quantity MemoryAllocator passes to
 *     EXECUTORCH_TRACK_ALLOCATION).
 *   - ETDumpGen keeps allocators per run block (RunData) and only accepts
 *     track_allocator() right after create_event_block(), before any event.
 *     The runtime itself opens the blocks (Program::load_method -> "Default",
 *     Method::execute -> "Execute"), so AllocTrackingETDumpGen overrides
 *     create_event_block() to call ETDumpGen::create_event_block() and then
 *     ETDumpGen::track_allocator(name) for every registered allocator, in
 *     registration order. The AllocatorID ETDumpGen returns (the allocators
 *     vector length after the push, i.e. 1-based) is what the allocation
 *     events carry.
 */

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::etdump::ETDumpGen;
using executorch::etdump::ETDumpResult;
using executorch::extension::FileDataLoader;
using executorch::runtime::AllocatorID;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;

#define DIE(...)                      \
  do {                                \
    std::fprintf(stderr, __VA_ARGS__); \
    std::fprintf(stderr, "\n");       \
    std::exit(1);                     \
  } while (0)

namespace {

// ETDumpGen that (re-)registers a fixed list of allocators at the start of
// every event block the runtime opens.
class AllocTrackingETDumpGen : public ETDumpGen {
 public:
  AllocTrackingETDumpGen() : ETDumpGen() {}

  // Returns a slot index; the per-block AllocatorID is looked up with id().
  size_t register_allocator(const char* name) {
    names_.push_back(name);
    ids_.push_back(-1);
    return names_.size() - 1;
  }

  AllocatorID id(size_t slot) const {
    return ids_[slot];
  }

  void create_event_block(const char* name) override {
    ETDumpGen::create_event_block(name);
    for (size_t i = 0; i < names_.size(); ++i) {
      ids_[i] = ETDumpGen::track_allocator(names_[i]);
    }
  }

 private:
  std::vector<const char*> names_;
  std::vector<AllocatorID> ids_;
};

// Bump allocator that reports every successful allocation to the tracer.
class TracedAllocator : public MemoryAllocator {
 public:
  TracedAllocator(
      const char* name,
      uint32_t size,
      uint8_t* base,
      AllocTrackingETDumpGen* tracer)
      : MemoryAllocator(size, base),
        tracer_(tracer),
        slot_(tracer->register_allocator(name)) {}

  void* allocate(size_t size, size_t alignment = kDefaultAlignment) override {
    const size_t before = used_size();
    void* p = MemoryAllocator::allocate(size, alignment);
    if (p != nullptr) {
      const size_t consumed = used_size() - before;
      ++n_allocs_;
      total_bytes_ += consumed;
      tracer_->track_allocation(tracer_->id(slot_), consumed);
    }
    return p;
  }

  size_t n_allocs() const {
    return n_allocs_;
  }
  size_t total_bytes() const {
    return total_bytes_;
  }

 private:
  AllocTrackingETDumpGen* tracer_;
  size_t slot_;
  size_t n_allocs_ = 0;
  size_t total_bytes_ = 0;
};

// Host-side input tensor (ones) built from the method's TensorInfo.
struct InputTensor {
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int32_t> strides;
  std::vector<uint8_t> data;
  std::unique_ptr<TensorImpl> impl;
};

void fill_ones(ScalarType t, uint8_t* data, size_t nbytes) {
  switch (t) {
#define FILL(ET, CT)                                  \
  case ScalarType::ET: {                              \
    CT* d = reinterpret_cast<CT*>(data);              \
    for (size_t i = 0; i < nbytes / sizeof(CT); ++i) \
      d[i] = CT(1);                                   \
    break;                                            \
  }
    FILL(Float, float)
    FILL(Double, double)
    FILL(Int, int32_t)
    FILL(Long, int64_t)
    FILL(Short, int16_t)
    FILL(Char, int8_t)
    FILL(Byte, uint8_t)
    FILL(Bool, bool)
#undef FILL
    default:
      DIE("unsupported input dtype %d", static_cast<int>(t));
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    DIE("usage: %s <model.pte> <n_runs> <out.etdp>", argv[0]);
  }
  const char* pte_path = argv[1];
  const int n_runs = std::atoi(argv[2]);
  const char* out_path = argv[3];

  executorch::runtime::runtime_init();

  Result<FileDataLoader> loader = FileDataLoader::from(pte_path);
  if (!loader.ok())
    DIE("FileDataLoader::from(%s) failed: 0x%x", pte_path, (int)loader.error());

  Result<Program> program = Program::load(&loader.get());
  if (!program.ok())
    DIE("Program::load failed: 0x%x", (int)program.error());

  Result<const char*> method_name = program->get_method_name(0);
  if (!method_name.ok())
    DIE("program has no methods");
  Result<MethodMeta> meta = program->method_meta(*method_name);
  if (!meta.ok())
    DIE("method_meta(%s) failed: 0x%x", *method_name, (int)meta.error());

  // Planned memory: one buffer per memory-planned id, sized from method meta.
  std::vector<std::unique_ptr<uint8_t[]>> planned_buffers;
  std::vector<Span<uint8_t>> planned_spans;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    const size_t sz =
        static_cast<size_t>(meta->memory_planned_buffer_size(i).get());
    std::fprintf(stderr, "planned buffer %zu: %zu bytes\n", i, sz);
    planned_buffers.emplace_back(new uint8_t[sz]);
    planned_spans.push_back({planned_buffers.back().get(), sz});
  }
  HierarchicalAllocator planned_memory(
      {planned_spans.data(), planned_spans.size()});

  AllocTrackingETDumpGen tracer;

  // Method allocator (runtime structures, delegate state) and temp allocator
  // (kernel/delegate scratch, reset by the runtime after each instruction).
  constexpr uint32_t kMethodPool = 4u << 20;
  constexpr uint32_t kTempPool = 4u << 20;
  static uint8_t method_pool[kMethodPool] __attribute__((aligned(64)));
  static uint8_t temp_pool[kTempPool] __attribute__((aligned(64)));
  TracedAllocator method_allocator(
      "method_allocator", kMethodPool, method_pool, &tracer);
  TracedAllocator temp_allocator("temp_allocator", kTempPool, temp_pool, &tracer);

  MemoryManager memory_manager(
      &method_allocator, &planned_memory, &temp_allocator);

  Result<Method> method =
      program->load_method(*method_name, &memory_manager, &tracer);
  if (!method.ok())
    DIE("load_method(%s) failed: 0x%x", *method_name, (int)method.error());
  std::fprintf(
      stderr,
      "after load: method_allocator %zu allocs %zu bytes (used_size %zu); "
      "temp_allocator %zu allocs %zu bytes\n",
      method_allocator.n_allocs(),
      method_allocator.total_bytes(),
      method_allocator.used_size(),
      temp_allocator.n_allocs(),
      temp_allocator.total_bytes());

  // Inputs: ones of the shape/dtype/dim order the method meta declares.
  std::vector<InputTensor> inputs(meta->num_inputs());
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    Result<Tag> tag = meta->input_tag(i);
    if (!tag.ok() || *tag != Tag::Tensor)
      DIE("input %zu is not a tensor", i);
    Result<TensorInfo> ti = meta->input_tensor_meta(i);
    if (!ti.ok())
      DIE("input_tensor_meta(%zu) failed", i);
    InputTensor& in = inputs[i];
    const size_t dim = ti->sizes().size();
    in.sizes.assign(ti->sizes().begin(), ti->sizes().end());
    in.dim_order.assign(ti->dim_order().begin(), ti->dim_order().end());
    in.strides.assign(dim, 1);
    for (size_t k = dim; k-- > 1;) {
      in.strides[in.dim_order[k - 1]] =
          in.strides[in.dim_order[k]] * in.sizes[in.dim_order[k]];
    }
    in.data.assign(ti->nbytes(), 0);
    fill_ones(ti->scalar_type(), in.data.data(), in.data.size());
    in.impl = std::make_unique<TensorImpl>(
        ti->scalar_type(),
        static_cast<ssize_t>(dim),
        in.sizes.data(),
        in.data.data(),
        in.dim_order.data(),
        in.strides.data());
    std::fprintf(
        stderr,
        "input %zu: dtype %d, dim %zu, %zu bytes\n",
        i,
        (int)ti->scalar_type(),
        dim,
        ti->nbytes());
  }

  for (int r = 0; r < n_runs; ++r) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      Error e = method->set_input(EValue(Tensor(inputs[i].impl.get())), i);
      if (e != Error::Ok)
        DIE("set_input(%zu) failed: 0x%x", i, (int)e);
    }
    Error e = method->execute();
    if (e != Error::Ok)
      DIE("execute (run %d) failed: 0x%x", r, (int)e);
    std::fprintf(
        stderr,
        "after run %d: method_allocator %zu allocs %zu bytes; "
        "temp_allocator %zu allocs %zu bytes\n",
        r,
        method_allocator.n_allocs(),
        method_allocator.total_bytes(),
        temp_allocator.n_allocs(),
        temp_allocator.total_bytes());
  }

  ETDumpResult dump = tracer.get_etdump_data();
  if (dump.buf == nullptr || dump.size == 0)
    DIE("ETDumpGen produced no data");
  FILE* f = std::fopen(out_path, "wb");
  if (f == nullptr)
    DIE("cannot open %s", out_path);
  if (std::fwrite(dump.buf, 1, dump.size, f) != dump.size)
    DIE("short write to %s", out_path);
  std::fclose(f);
  std::fprintf(
      stderr, "wrote %s (%zu bytes, %zu blocks)\n", out_path, dump.size,
      tracer.get_num_blocks());
  std::free(dump.buf);
  return 0;
}
