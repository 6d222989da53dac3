// SPDX-License-Identifier: MIT
#pragma once

#include "core/allocator/streams.h"
#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>
#include <set>
#include <vector>

namespace memledger {

// PyTorch's CUDA caching allocator, simulated request by request: what
// `torch.cuda.max_memory_reserved()` reports, and what runs out. It follows
// c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.x, read at commit 001074d2;
// the rules have held since 1.10, expandable segments since 2.1):
// - a request is rounded up to 512 bytes; up to 1 MiB it is served from the
//   small pool, whose segments are 2 MiB; larger ones from the large pool,
//   whose segments are 20 MiB for requests under 10 MiB and the request
//   rounded up to 2 MiB otherwise;
// - a cached free block of the same stream and pool is reused best fit (the
//   smallest that holds the request, then the lowest address); it is split
//   when what remains is at least 512 bytes (small pool, or any pool with
//   expandable segments) or more than 1 MiB (large pool), and not when the
//   request is at least max_split_size; a free block merges with its free
//   neighbours in the segment;
// - blocks of max_split_size or more serve only requests of at least that
//   size, and only when they are less than 20 MiB larger;
// - when no cached block fits, a new segment is reserved (cudaMalloc); when
//   that fails, oversize cached blocks are released, then every cached block
//   that fills its whole segment, and the segment is tried again; only then
//   is the request out of memory;
// - with expandable segments, each stream and pool has one segment of
//   virtual address space, mapped in pages (2 MiB small, 20 MiB large) as it
//   is needed and unmapped when freeing cache;
// - with a per-process memory fraction and a garbage-collection threshold,
//   cached large blocks that fill their segment are released, the longest
//   unused first, before a new segment is reserved past the threshold.
// CUDA graphs' private pools, record_stream's cross-stream events and the
// pinned host allocator are not simulated: a training step outside graph
// capture has none of them on the device.

using AllocationId = std::int32_t;

enum class SegmentAction : std::uint8_t {
    Alloc, // cudaMalloc of a new segment
    Free, // cudaFree of a whole cached segment
    Map, // expandable segments: pages mapped
    Unmap // expandable segments: pages unmapped
};

// A change of reserved memory, as a snapshot's device_traces record it
// (segment_alloc, segment_free, segment_map, segment_unmap).
struct SegmentEvent
{
    SegmentAction action = SegmentAction::Alloc;
    std::uint64_t addr = 0;
    Bytes size = 0;
    StreamId stream = 0;
    std::int64_t request = 0; // the number of malloc calls before the one that caused it
};

struct AllocatorStats
{
    Bytes requested = 0; // the sizes asked for, alive now
    Bytes requested_peak = 0;
    Bytes allocated = 0; // the blocks handed out (rounded, and whole when not split): memory_allocated()
    Bytes allocated_peak = 0;
    Bytes reserved = 0; // segments (mapped pages): memory_reserved()
    Bytes reserved_peak = 0;
    // At the reserved peak: what the blocks in use held then, and the cached
    // free bytes in segments some block was using (fragmentation) rather than
    // in wholly free segments.
    Bytes allocated_at_reserved_peak = 0;
    Bytes split_free_at_reserved_peak = 0;
    std::int64_t segments = 0; // alive now
    std::int64_t segments_peak = 0;
    std::int64_t device_allocs = 0; // cudaMalloc or page-map calls
    std::int64_t device_frees = 0;
    std::int64_t alloc_retries = 0; // cache released and the segment tried again (num_alloc_retries)
    std::int64_t ooms = 0; // requests that failed even then (allocated past the limit to go on)
    Bytes first_oom_request = 0; // the size of the first of them
};

class CachingAllocator
{
public:
    // `deviceLimit`: what cudaMalloc can reserve in all (the device's memory
    // less what the CUDA context, NCCL and other processes hold); `deviceTotal`:
    // the device's memory, for per_process_memory_fraction.
    CachingAllocator(const AllocatorConfig &config, Bytes deviceLimit, Bytes deviceTotal);

    // A request of `size` bytes on `stream`. Never fails: a request past the
    // limit counts as an OOM and is reserved anyway, so the simulation goes on
    // and says by how much the device was short.
    AllocationId malloc(Bytes size, StreamId stream = 0);
    void free(AllocationId id);
    // torch.cuda.empty_cache(): every cached block that fills its segment is released.
    void emptyCache();

    const AllocatorStats &stats() const { return m_stats; }
    // Every change of reserved memory, in order, when recording (off by default).
    void recordSegments(bool on) { m_recording = on; }
    const std::vector<SegmentEvent> &segmentEvents() const { return m_events; }
    // The block an allocation holds: its size after rounding (and whole when not split).
    Bytes blockSize(AllocationId id) const;

    static Bytes roundSize(Bytes size);
    static Bytes segmentSize(Bytes roundedSize);

private:
    struct Block
    {
        std::uint64_t addr = 0;
        Bytes size = 0;
        Bytes requested = 0;
        StreamId stream = 0;
        std::int32_t prev = -1, next = -1; // neighbours in the segment
        std::int32_t expandable = -1; // the expandable segment it lies in, or -1
        std::int64_t gcBase = 0; // the pool's free-block searches when it was cached
        bool small = false;
        bool allocated = false;
        bool mapped = true;
        bool split() const { return prev >= 0 || next >= 0; }
    };
    // Free blocks in best-fit order (stream, size, address), or address order;
    // the keys carry the fields they order by, so a search reads no block.
    struct SizeKey
    {
        StreamId stream;
        Bytes size;
        std::uint64_t addr;
        std::int32_t index;
        bool operator<(const SizeKey &o) const
        {
            return stream != o.stream ? stream < o.stream : size != o.size ? size < o.size : addr < o.addr;
        }
    };
    struct AddrKey
    {
        StreamId stream;
        std::uint64_t addr;
        std::int32_t index;
        bool operator<(const AddrKey &o) const { return stream != o.stream ? stream < o.stream : addr < o.addr; }
    };
    struct Pool
    {
        bool small = false;
        std::set<SizeKey> blocks; // cached free blocks
        std::set<AddrKey> unmapped; // expandable segments' unmapped ranges
        std::int64_t searches = 0; // free-block searches, the garbage collector's clock
    };
    struct Expandable
    {
        std::uint64_t base = 0;
        Bytes pageSize = 0;
    };

    SizeKey sizeKey(std::int32_t i) const;
    AddrKey addrKey(std::int32_t i) const;
    std::int32_t newBlock(const Block &b);
    void dropBlock(std::int32_t i);
    Pool &poolOf(const Block &b) { return b.small ? m_small : m_large; }
    void cache(std::int32_t i);
    std::int32_t findFree(Pool &pool, Bytes size, StreamId stream);
    bool shouldSplit(const Block &b, Bytes size) const;
    std::int32_t reserveSegment(Pool &pool, Bytes size, StreamId stream, bool ignoreLimit);
    std::int32_t reserveExpandable(Pool &pool, Bytes size, StreamId stream, bool ignoreLimit);
    std::int32_t findExpandable(Pool &pool, Bytes size, StreamId stream);
    bool mapBlock(std::int32_t i, Bytes size, bool ignoreLimit);
    void unmapBlock(std::int32_t i);
    bool releaseOversize(Pool &pool, Bytes size, StreamId stream);
    void releaseCached();
    void releasePool(Pool &pool);
    void releaseSegment(std::int32_t i);
    void collectGarbage();
    void mergeInto(std::int32_t dst, std::int32_t src);
    AllocationId handOut(std::int32_t i, Bytes size, Bytes requested);
    void changeReserved(Bytes delta, SegmentAction action, std::uint64_t addr, StreamId stream);
    Bytes splitFreeBytes() const;

    AllocatorConfig m_config;
    Bytes m_maxSplit;
    Bytes m_limit; // what cudaMalloc may reserve
    Bytes m_total; // the device's memory
    Bytes m_allowed; // per_process_memory_fraction's share, or the limit
    bool m_gc = false;
    std::vector<Block> m_blocks;
    std::vector<std::int32_t> m_unused; // indices of dropped blocks
    std::vector<Expandable> m_expandables;
    Pool m_small, m_large;
    std::uint64_t m_nextAddr = std::uint64_t(1) << 40; // fresh virtual addresses, never reused
    AllocatorStats m_stats;
    std::int64_t m_requests = 0;
    bool m_newPeak = false; // reserved reached a new peak during the request being served
    bool m_recording = false;
    std::vector<SegmentEvent> m_events;
};

} // namespace memledger
