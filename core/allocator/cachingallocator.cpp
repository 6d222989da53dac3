// SPDX-License-Identifier: MIT
#include "core/allocator/cachingallocator.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace memledger {

namespace {

constexpr Bytes kMiB = Bytes(1) << 20;
constexpr Bytes kMinBlock = 512; // every request is rounded up to a multiple of this
constexpr Bytes kSmallSize = kMiB; // the largest request of the small pool
constexpr Bytes kSmallBuffer = 2 * kMiB; // the small pool's segments (and expandable pages)
constexpr Bytes kMinLargeAlloc = 10 * kMiB; // requests under this take a kLargeBuffer segment
constexpr Bytes kLargeBuffer = 20 * kMiB; // ... and the large pool's expandable pages
constexpr Bytes kRoundLarge = 2 * kMiB; // larger requests' segments are rounded up to this

Bytes roundUp(Bytes value, Bytes unit)
{
    return (value + unit - 1) / unit * unit;
}

} // namespace

CachingAllocator::CachingAllocator(const AllocatorConfig &config, Bytes deviceLimit, Bytes deviceTotal)
    : m_config(config)
    , m_maxSplit(config.max_split_size_mb ? *config.max_split_size_mb * kMiB : std::numeric_limits<Bytes>::max())
    , m_limit(deviceLimit)
    , m_total(deviceTotal)
    , m_allowed(config.per_process_memory_fraction ? std::min(
                    deviceLimit, static_cast<Bytes>(*config.per_process_memory_fraction * double(deviceTotal)))
                                                   : deviceLimit)
    , m_gc(config.per_process_memory_fraction && config.garbage_collection_threshold
           && *config.garbage_collection_threshold > 0)
    , m_small{.small = true, .blocks = {}, .unmapped = {}, .searches = 0}
    , m_large{.small = false, .blocks = {}, .unmapped = {}, .searches = 0}
{ }

Bytes CachingAllocator::roundSize(Bytes size)
{
    return size < kMinBlock ? kMinBlock : roundUp(size, kMinBlock);
}

Bytes CachingAllocator::segmentSize(Bytes roundedSize)
{
    if (roundedSize <= kSmallSize)
        return kSmallBuffer;
    if (roundedSize < kMinLargeAlloc)
        return kLargeBuffer;
    return roundUp(roundedSize, kRoundLarge);
}

Bytes CachingAllocator::blockSize(AllocationId id) const
{
    return id < 0 ? 0 : m_blocks[static_cast<std::size_t>(id)].size;
}

CachingAllocator::SizeKey CachingAllocator::sizeKey(std::int32_t i) const
{
    const Block &b = m_blocks[static_cast<std::size_t>(i)];
    return {b.stream, b.size, b.addr, i};
}

CachingAllocator::AddrKey CachingAllocator::addrKey(std::int32_t i) const
{
    const Block &b = m_blocks[static_cast<std::size_t>(i)];
    return {b.stream, b.addr, i};
}

std::int32_t CachingAllocator::newBlock(const Block &b)
{
    if (!m_unused.empty()) {
        const std::int32_t i = m_unused.back();
        m_unused.pop_back();
        m_blocks[static_cast<std::size_t>(i)] = b;
        return i;
    }
    m_blocks.push_back(b);
    return static_cast<std::int32_t>(m_blocks.size() - 1);
}

void CachingAllocator::dropBlock(std::int32_t i)
{
    m_blocks[static_cast<std::size_t>(i)] = Block{};
    m_unused.push_back(i);
}

void CachingAllocator::cache(std::int32_t i)
{
    Block &b = m_blocks[static_cast<std::size_t>(i)];
    Pool &pool = poolOf(b);
    b.gcBase = pool.searches;
    pool.blocks.insert(sizeKey(i));
}

AllocationId CachingAllocator::malloc(Bytes requested, StreamId stream)
{
    if (requested <= 0) { // PyTorch hands out no block for an empty tensor
        ++m_requests;
        return -1;
    }
    const Bytes size = roundSize(requested);
    Pool &pool = size <= kSmallSize ? m_small : m_large;
    std::int32_t block = findFree(pool, size, stream);
    if (block < 0) {
        if (m_gc)
            collectGarbage();
        block = reserveSegment(pool, size, stream, false);
        if (block < 0 && releaseOversize(pool, size, stream))
            block = reserveSegment(pool, size, stream, false);
        if (block < 0) {
            releaseCached();
            ++m_stats.alloc_retries;
            block = reserveSegment(pool, size, stream, false);
        }
        if (block < 0) {
            if (m_stats.ooms++ == 0)
                m_stats.first_oom_request = requested;
            block = reserveSegment(pool, size, stream, true);
        }
    }
    const AllocationId id = handOut(block, size, requested);
    if (m_newPeak) {
        m_stats.allocated_at_reserved_peak = m_stats.allocated;
        m_stats.split_free_at_reserved_peak = splitFreeBytes();
        m_newPeak = false;
    }
    ++m_requests;
    return id;
}

std::int32_t CachingAllocator::findFree(Pool &pool, Bytes size, StreamId stream)
{
    if (m_gc)
        ++pool.searches;
    auto it = pool.blocks.lower_bound(SizeKey{stream, size, 0, -1});
    if (it == pool.blocks.end() || it->stream != stream)
        return -1;
    if (m_blocks[static_cast<std::size_t>(it->index)].expandable >= 0) {
        // A block followed by unmapped pages can grow into them: best fit
        // measures it by what it can become.
        const auto growable = [&](std::int32_t i) {
            const Block &b = m_blocks[static_cast<std::size_t>(i)];
            return b.size
                   + (b.next >= 0 && !m_blocks[static_cast<std::size_t>(b.next)].mapped
                          ? m_blocks[static_cast<std::size_t>(b.next)].size
                          : 0);
        };
        for (auto next = std::next(it);
             m_blocks[static_cast<std::size_t>(it->index)].expandable >= 0 && next != pool.blocks.end()
             && next->stream == stream && growable(next->index) < growable(it->index);
             ++next)
            it = next;
    }
    const Bytes found = it->size;
    // An oversize block serves only an oversize request, and only one it exceeds by less than 20 MiB.
    if (size < m_maxSplit && found >= m_maxSplit)
        return -1;
    if (size >= m_maxSplit && found >= size + kLargeBuffer)
        return -1;
    const std::int32_t i = it->index;
    pool.blocks.erase(it);
    return i;
}

bool CachingAllocator::shouldSplit(const Block &b, Bytes size) const
{
    const Bytes remaining = b.size - size;
    if (b.small || m_config.expandable_segments)
        return remaining >= kMinBlock;
    return size < m_maxSplit && remaining > kSmallSize;
}

AllocationId CachingAllocator::handOut(std::int32_t i, Bytes size, Bytes requested)
{
    std::int32_t out = i;
    if (shouldSplit(m_blocks[static_cast<std::size_t>(i)], size)) {
        // The front of the block is handed out; the rest stays cached.
        Block front = m_blocks[static_cast<std::size_t>(i)];
        front.size = size;
        front.next = i;
        out = newBlock(front);
        Block &rest = m_blocks[static_cast<std::size_t>(i)];
        if (rest.prev >= 0)
            m_blocks[static_cast<std::size_t>(rest.prev)].next = out;
        rest.prev = out;
        rest.addr += static_cast<std::uint64_t>(size);
        rest.size -= size;
        cache(i);
    }
    Block &b = m_blocks[static_cast<std::size_t>(out)];
    b.allocated = true;
    b.requested = requested;
    m_stats.allocated += b.size;
    m_stats.requested += requested;
    m_stats.allocated_peak = std::max(m_stats.allocated_peak, m_stats.allocated);
    m_stats.requested_peak = std::max(m_stats.requested_peak, m_stats.requested);
    return out;
}

void CachingAllocator::free(AllocationId id)
{
    if (id < 0)
        return;
    Block &b = m_blocks[static_cast<std::size_t>(id)];
    if (!b.allocated)
        throw std::logic_error("CachingAllocator::free of a block that is not allocated");
    b.allocated = false;
    m_stats.allocated -= b.size;
    m_stats.requested -= b.requested;
    b.requested = 0;
    mergeInto(id, b.prev);
    mergeInto(id, m_blocks[static_cast<std::size_t>(id)].next);
    cache(id);
}

// `src`, a free neighbour of `dst` in the same state (mapped or not), becomes part of it.
void CachingAllocator::mergeInto(std::int32_t dst, std::int32_t src)
{
    if (src < 0)
        return;
    Block &s = m_blocks[static_cast<std::size_t>(src)];
    Block &d = m_blocks[static_cast<std::size_t>(dst)];
    if (s.allocated || s.mapped != d.mapped)
        return;
    Pool &pool = poolOf(s);
    if (s.mapped)
        pool.blocks.erase(sizeKey(src));
    else
        pool.unmapped.erase(addrKey(src));
    if (d.prev == src) {
        d.addr = s.addr;
        d.prev = s.prev;
        if (d.prev >= 0)
            m_blocks[static_cast<std::size_t>(d.prev)].next = dst;
    } else {
        d.next = s.next;
        if (d.next >= 0)
            m_blocks[static_cast<std::size_t>(d.next)].prev = dst;
    }
    d.size += s.size;
    dropBlock(src);
}

void CachingAllocator::changeReserved(Bytes delta, SegmentAction action, std::uint64_t addr, StreamId stream)
{
    m_stats.reserved += delta;
    if (delta > 0)
        ++m_stats.device_allocs;
    else
        ++m_stats.device_frees;
    if (m_stats.reserved > m_stats.reserved_peak) {
        m_stats.reserved_peak = m_stats.reserved;
        m_newPeak = true; // what it holds is read once the request that reserved it has its block
    }
    if (m_recording)
        m_events.push_back({.action = action,
                            .addr = addr,
                            .size = delta < 0 ? -delta : delta,
                            .stream = stream,
                            .request = m_requests});
}

// Cached bytes beside a block in use: free space a new segment's worth of
// request may not fit in, though it is reserved.
Bytes CachingAllocator::splitFreeBytes() const
{
    const auto inUse = [&](std::int32_t i) { return i >= 0 && m_blocks[static_cast<std::size_t>(i)].allocated; };
    Bytes sum = 0;
    for (const Pool *pool : {&m_small, &m_large})
        for (const SizeKey &k : pool->blocks) {
            const Block &b = m_blocks[static_cast<std::size_t>(k.index)];
            if (inUse(b.prev) || inUse(b.next))
                sum += b.size;
        }
    return sum;
}

std::int32_t CachingAllocator::reserveSegment(Pool &pool, Bytes size, StreamId stream, bool ignoreLimit)
{
    const Bytes segment = segmentSize(size);
    if (!ignoreLimit && m_config.per_process_memory_fraction && m_stats.reserved + segment > m_allowed)
        return -1;
    if (m_config.expandable_segments)
        return reserveExpandable(pool, size, stream, ignoreLimit);
    if (!ignoreLimit && m_stats.reserved + segment > m_limit)
        return -1;
    const std::int32_t i = newBlock({.addr = m_nextAddr, .size = segment, .stream = stream, .small = pool.small});
    m_nextAddr += static_cast<std::uint64_t>(roundUp(segment, kRoundLarge));
    ++m_stats.segments;
    m_stats.segments_peak = std::max(m_stats.segments_peak, m_stats.segments);
    changeReserved(segment, SegmentAction::Alloc, m_blocks[static_cast<std::size_t>(i)].addr, stream);
    return i;
}

// The lowest unmapped range of the stream's segments (with the free block
// before it) that has room for `size`, or a new segment's address space:
// the device's memory and an eighth, unmapped.
std::int32_t CachingAllocator::findExpandable(Pool &pool, Bytes size, StreamId stream)
{
    const auto free = [&](std::int32_t i) { return i >= 0 && !m_blocks[static_cast<std::size_t>(i)].allocated; };
    for (const AddrKey &k : pool.unmapped) {
        const std::int32_t u = k.index;
        if (k.stream != stream)
            continue;
        std::int32_t candidate = u;
        if (free(m_blocks[static_cast<std::size_t>(u)].prev))
            candidate = m_blocks[static_cast<std::size_t>(u)].prev;
        Bytes room = 0;
        for (std::int32_t b = candidate; room < size && free(b); b = m_blocks[static_cast<std::size_t>(b)].next)
            room += m_blocks[static_cast<std::size_t>(b)].size;
        if (room >= size)
            return candidate;
    }
    const Bytes page = pool.small ? kSmallBuffer : kLargeBuffer;
    const Bytes space = roundUp(std::max(m_total + m_total / 8, size), page);
    m_expandables.push_back({.base = m_nextAddr, .pageSize = page});
    m_nextAddr += static_cast<std::uint64_t>(roundUp(space, kLargeBuffer));
    ++m_stats.segments;
    m_stats.segments_peak = std::max(m_stats.segments_peak, m_stats.segments);
    const std::int32_t i = newBlock({.addr = m_expandables.back().base,
                                     .size = space,
                                     .stream = stream,
                                     .expandable = static_cast<std::int32_t>(m_expandables.size() - 1),
                                     .small = pool.small,
                                     .mapped = false});
    pool.unmapped.insert(addrKey(i));
    return i;
}

std::int32_t CachingAllocator::reserveExpandable(Pool &pool, Bytes size, StreamId stream, bool ignoreLimit)
{
    std::int32_t candidate = findExpandable(pool, size, stream);
    if (!m_blocks[static_cast<std::size_t>(candidate)].mapped
        && !mapBlock(candidate, std::min(m_blocks[static_cast<std::size_t>(candidate)].size, size), ignoreLimit))
        return -1;
    // A free block followed by unmapped pages: map what it still lacks, which merges into it.
    while (m_blocks[static_cast<std::size_t>(candidate)].size < size) {
        const Bytes lacking = size - m_blocks[static_cast<std::size_t>(candidate)].size;
        const std::int32_t next = m_blocks[static_cast<std::size_t>(candidate)].next;
        if (!mapBlock(next, std::min(lacking, m_blocks[static_cast<std::size_t>(next)].size), ignoreLimit))
            return -1;
        candidate = next;
    }
    pool.blocks.erase(sizeKey(candidate));
    return candidate;
}

// Maps the pages that hold the first `size` bytes of the unmapped block `i`;
// the rest of it stays unmapped.
bool CachingAllocator::mapBlock(std::int32_t i, Bytes size, bool ignoreLimit)
{
    Block &b = m_blocks[static_cast<std::size_t>(i)];
    const Expandable &e = m_expandables[static_cast<std::size_t>(b.expandable)];
    const Bytes mapped = roundUp(size, e.pageSize); // the block starts on a page
    if (!ignoreLimit && m_stats.reserved + mapped > m_limit)
        return false;
    Pool &pool = poolOf(b);
    pool.unmapped.erase(addrKey(i));
    b.mapped = true;
    const std::uint64_t at = b.addr;
    if (mapped < b.size) {
        Block rest = b;
        rest.addr += static_cast<std::uint64_t>(mapped);
        rest.size -= mapped;
        rest.prev = i;
        const std::int32_t r = newBlock(rest); // may move m_blocks: index from here on
        Block &head = m_blocks[static_cast<std::size_t>(i)];
        if (head.next >= 0)
            m_blocks[static_cast<std::size_t>(head.next)].prev = r;
        head.next = r;
        head.size = mapped;
        m_blocks[static_cast<std::size_t>(r)].mapped = false;
        pool.unmapped.insert(addrKey(r));
    }
    mergeInto(i, m_blocks[static_cast<std::size_t>(i)].prev);
    mergeInto(i, m_blocks[static_cast<std::size_t>(i)].next);
    cache(i);
    changeReserved(mapped, SegmentAction::Map, at, m_blocks[static_cast<std::size_t>(i)].stream);
    return true;
}

// Unmaps the whole pages inside the free block `i`; what is left of them on
// either side stays cached.
void CachingAllocator::unmapBlock(std::int32_t i)
{
    const Block b = m_blocks[static_cast<std::size_t>(i)];
    const Expandable &e = m_expandables[static_cast<std::size_t>(b.expandable)];
    const std::uint64_t page = static_cast<std::uint64_t>(e.pageSize);
    const std::uint64_t first = (b.addr - e.base + page - 1) / page * page + e.base;
    const std::uint64_t last = (b.addr + static_cast<std::uint64_t>(b.size) - e.base) / page * page + e.base;
    if (first >= last)
        return;
    Pool &pool = poolOf(b);
    pool.blocks.erase(sizeKey(i));
    const auto splice = [&](std::uint64_t addr, Bytes size, std::int32_t prev, std::int32_t next) {
        Block piece = b;
        piece.addr = addr;
        piece.size = size;
        piece.prev = prev;
        piece.next = next;
        const std::int32_t k = newBlock(piece);
        if (prev >= 0)
            m_blocks[static_cast<std::size_t>(prev)].next = k;
        if (next >= 0)
            m_blocks[static_cast<std::size_t>(next)].prev = k;
        cache(k);
    };
    if (first > b.addr)
        splice(b.addr, static_cast<Bytes>(first - b.addr), b.prev, i);
    const std::uint64_t end = b.addr + static_cast<std::uint64_t>(b.size);
    if (end > last)
        splice(last, static_cast<Bytes>(end - last), i, b.next);
    Block &u = m_blocks[static_cast<std::size_t>(i)];
    u.addr = first;
    u.size = static_cast<Bytes>(last - first);
    u.mapped = false;
    mergeInto(i, u.prev);
    mergeInto(i, m_blocks[static_cast<std::size_t>(i)].next);
    pool.unmapped.insert(addrKey(i));
    changeReserved(-static_cast<Bytes>(last - first), SegmentAction::Unmap, first, b.stream);
}

// With max_split_size: release the smallest cached oversize block that covers
// the request, or else the largest ones until they add up to it.
bool CachingAllocator::releaseOversize(Pool &pool, Bytes size, StreamId stream)
{
    if (!m_config.max_split_size_mb)
        return false;
    const Bytes want = std::max(size, m_maxSplit);
    auto it = pool.blocks.lower_bound(SizeKey{stream, want, 0, -1});
    const auto releasable = [&](std::int32_t i) {
        const Block &b = m_blocks[static_cast<std::size_t>(i)];
        return b.stream == stream && b.size >= m_maxSplit && !b.split() && b.expandable < 0;
    };
    if (it != pool.blocks.end() && it->stream == stream) {
        if (!releasable(it->index))
            return false;
        releaseSegment(it->index);
        return true;
    }
    if (it == pool.blocks.begin())
        return false;
    Bytes released = 0;
    --it;
    while (released < want && releasable(it->index)) {
        const std::int32_t current = it->index;
        const bool first = it == pool.blocks.begin();
        if (!first)
            --it;
        released += m_blocks[static_cast<std::size_t>(current)].size;
        releaseSegment(current);
        if (first)
            break;
    }
    return released >= want;
}

// A cached block that is its whole segment goes back to the device (cudaFree).
void CachingAllocator::releaseSegment(std::int32_t i)
{
    const Block b = m_blocks[static_cast<std::size_t>(i)];
    poolOf(b).blocks.erase(sizeKey(i));
    --m_stats.segments;
    changeReserved(-b.size, SegmentAction::Free, b.addr, b.stream);
    dropBlock(i);
}

void CachingAllocator::releaseCached()
{
    releasePool(m_large);
    releasePool(m_small);
}

void CachingAllocator::releasePool(Pool &pool)
{
    std::vector<std::int32_t> cached, unmap;
    for (const SizeKey &k : pool.blocks)
        cached.push_back(k.index);
    for (const std::int32_t i : cached) {
        const Block &b = m_blocks[static_cast<std::size_t>(i)];
        if (b.expandable >= 0)
            unmap.push_back(i);
        else if (!b.split())
            releaseSegment(i);
    }
    for (const std::int32_t i : unmap) {
        unmapBlock(i);
        const Block &b = m_blocks[static_cast<std::size_t>(i)];
        if (!b.mapped && !b.split()) { // the whole address space is unmapped: the segment goes
            pool.unmapped.erase(addrKey(i));
            --m_stats.segments;
            dropBlock(i);
        }
    }
}

void CachingAllocator::emptyCache()
{
    releaseCached();
}

// garbage_collection_threshold: above the threshold of the allowed memory,
// release cached large blocks that fill their segment, those unused for at
// least the average time first, until reserved is back under it.
void CachingAllocator::collectGarbage()
{
    const Bytes threshold = static_cast<Bytes>(*m_config.garbage_collection_threshold * double(m_allowed));
    if (m_stats.reserved <= threshold)
        return;
    const Bytes target = m_stats.reserved - threshold;
    const auto freeable = [&](const Block &b) { return !b.split() && b.expandable < 0; };
    const auto age = [&](const Block &b) { return m_large.searches - b.gcBase; };
    std::int64_t totalAge = 0, count = 0;
    for (const SizeKey &k : m_large.blocks)
        if (freeable(m_blocks[static_cast<std::size_t>(k.index)])) {
            totalAge += age(m_blocks[static_cast<std::size_t>(k.index)]);
            ++count;
        }
    Bytes reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        const double averageAge = double(totalAge) / double(count);
        freed = false;
        std::vector<std::int32_t> cached;
        for (const SizeKey &k : m_large.blocks)
            cached.push_back(k.index);
        for (const std::int32_t i : cached) {
            const Block &b = m_blocks[static_cast<std::size_t>(i)];
            if (!freeable(b) || double(age(b)) < averageAge)
                continue;
            freed = true;
            reclaimed += b.size;
            totalAge -= age(b);
            --count;
            releaseSegment(i);
        }
    }
}

} // namespace memledger
