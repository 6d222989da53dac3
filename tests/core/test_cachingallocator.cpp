// SPDX-License-Identifier: MIT
// PyTorch's CUDA caching allocator, simulated (core/allocator): each case is
// worked by hand from the rules of c10/cuda/CUDACachingAllocator.cpp, the
// expected segments written down before the simulator ran them.
#include "core/allocator/cachingallocator.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

using namespace memledger;

namespace Catch {
template<>
struct StringMaker<SegmentAction>
{
    static std::string convert(SegmentAction a)
    {
        constexpr const char *names[] = {"segment_alloc", "segment_free", "segment_map", "segment_unmap"};
        return names[static_cast<int>(a)];
    }
};
} // namespace Catch

namespace {

constexpr Bytes KiB = 1024;
constexpr Bytes MiB = 1024 * KiB;
constexpr Bytes GiB = 1024 * MiB;

// (action, size) of every change of reserved memory, in order.
std::vector<std::pair<SegmentAction, Bytes>> segmentsOf(const CachingAllocator &a)
{
    std::vector<std::pair<SegmentAction, Bytes>> out;
    for (const SegmentEvent &e : a.segmentEvents())
        out.emplace_back(e.action, e.size);
    return out;
}

struct Recording : CachingAllocator
{
    explicit Recording(const AllocatorConfig &config = {}, Bytes limit = 80 * GiB, Bytes total = 80 * GiB)
        : CachingAllocator(config, limit, total)
    {
        recordSegments(true);
    }
};

constexpr SegmentAction Alloc = SegmentAction::Alloc;
constexpr SegmentAction Free = SegmentAction::Free;
constexpr SegmentAction Map = SegmentAction::Map;

} // namespace

TEST_CASE("Requests round up to 512 bytes — segments are 2 MiB, 20 MiB or the request rounded to 2 MiB", "[allocator]")
{
    CHECK(CachingAllocator::roundSize(1) == 512);
    CHECK(CachingAllocator::roundSize(512) == 512);
    CHECK(CachingAllocator::roundSize(513) == 1024);
    // kSmallSize = 1 MiB: the small pool's 2 MiB segments (kSmallBuffer).
    CHECK(CachingAllocator::segmentSize(512) == 2 * MiB);
    CHECK(CachingAllocator::segmentSize(1 * MiB) == 2 * MiB);
    // Over 1 MiB and under kMinLargeAlloc = 10 MiB: a kLargeBuffer of 20 MiB.
    CHECK(CachingAllocator::segmentSize(1 * MiB + 512) == 20 * MiB);
    CHECK(CachingAllocator::segmentSize(10 * MiB - 512) == 20 * MiB);
    // From 10 MiB: the request rounded up to kRoundLarge = 2 MiB.
    CHECK(CachingAllocator::segmentSize(10 * MiB) == 10 * MiB);
    CHECK(CachingAllocator::segmentSize(10 * MiB + 512) == 12 * MiB);
}

TEST_CASE("Small requests pack into 2 MiB segments", "[allocator]")
{
    Recording a;
    // 400 KiB is a multiple of 512: five fit in 2 MiB (2,048,000 of 2,097,152
    // bytes); the 48 KiB left cannot hold a sixth, which opens a second segment.
    for (int i = 0; i < 6; ++i)
        a.malloc(400 * KiB);
    CHECK(segmentsOf(a) == std::vector<std::pair<SegmentAction, Bytes>>{{Alloc, 2 * MiB}, {Alloc, 2 * MiB}});
    CHECK(a.stats().reserved == 4 * MiB);
    CHECK(a.stats().allocated == 6 * 400 * KiB);
}

TEST_CASE("Requests of 1 to 10 MiB share 20 MiB segments — a remainder of 1 MiB or less is not split off",
          "[allocator]")
{
    Recording a;
    // Six 3 MiB requests split one 20 MiB segment, leaving a 2 MiB block (more
    // than 1 MiB, so it was split off); a seventh does not fit in it.
    for (int i = 0; i < 6; ++i)
        a.malloc(3 * MiB);
    CHECK(a.stats().reserved == 20 * MiB);
    const AllocationId odd = a.malloc(3 * MiB / 2); // 1.5 MiB: the 2 MiB block, 0.5 MiB left is not split off
    CHECK(a.blockSize(odd) == 2 * MiB);
    CHECK(a.stats().reserved == 20 * MiB);
    CHECK(a.stats().allocated == 20 * MiB); // memory_allocated counts the whole block
    CHECK(a.stats().requested == 18 * MiB + 3 * MiB / 2);
    a.malloc(3 * MiB);
    CHECK(segmentsOf(a) == std::vector<std::pair<SegmentAction, Bytes>>{{Alloc, 20 * MiB}, {Alloc, 20 * MiB}});

    // 11 MiB takes a 12 MiB segment whole: 1 MiB left is not more than kSmallSize.
    Recording b;
    const AllocationId eleven = b.malloc(11 * MiB);
    CHECK(b.blockSize(eleven) == 12 * MiB);
    CHECK(b.stats().allocated == 12 * MiB);
}

TEST_CASE("A freed block is reused best fit and split — a request it cannot hold reserves a new segment", "[allocator]")
{
    Recording a;
    const AllocationId x = a.malloc(40 * MiB), y = a.malloc(30 * MiB);
    a.free(x);
    a.free(y);
    // 25 MiB: the 30 MiB block is the smallest that holds it; 5 MiB is split off.
    const AllocationId z = a.malloc(25 * MiB);
    CHECK(a.blockSize(z) == 25 * MiB);
    CHECK(a.stats().reserved == 70 * MiB);
    // Blocks of one stream never serve another.
    a.malloc(40 * MiB, 1);
    CHECK(segmentsOf(a)
          == std::vector<std::pair<SegmentAction, Bytes>>{{Alloc, 40 * MiB}, {Alloc, 30 * MiB}, {Alloc, 40 * MiB}});
    CHECK(a.stats().reserved == 110 * MiB);
}

TEST_CASE("Fragmentation: a split block's free remainder cannot hold a larger request", "[allocator]")
{
    Recording a;
    a.free(a.malloc(60 * MiB));
    const AllocationId y = a.malloc(20 * MiB); // the 60 MiB segment, split: 40 MiB free beside it
    a.malloc(50 * MiB); // the 40 MiB block is too small: a new 50 MiB segment
    CHECK(segmentsOf(a) == std::vector<std::pair<SegmentAction, Bytes>>{{Alloc, 60 * MiB}, {Alloc, 50 * MiB}});
    CHECK(a.stats().reserved_peak == 110 * MiB);
    CHECK(a.stats().allocated == 70 * MiB);
    // At the peak, the 40 MiB beside y are the fragmentation, reserved but unusable for 50 MiB.
    CHECK(a.stats().allocated_at_reserved_peak == 70 * MiB);
    CHECK(a.stats().split_free_at_reserved_peak == 40 * MiB);
    // Freeing y merges the segment back whole.
    a.free(y);
    a.emptyCache();
    CHECK(a.stats().reserved == 50 * MiB);
}

TEST_CASE("Expandable segments grow by 20 MiB pages into the free space before them", "[allocator]")
{
    AllocatorConfig config;
    config.expandable_segments = true;
    Recording a(config);
    // 60 MiB maps three 20 MiB pages of the stream's segment.
    a.free(a.malloc(60 * MiB));
    // 20 MiB reuses the mapped range (split: any remainder of 512 bytes or more is).
    const AllocationId y = a.malloc(20 * MiB);
    // 50 MiB: the 40 MiB free after y plus one more page mapped after them.
    const AllocationId z = a.malloc(50 * MiB);
    CHECK(segmentsOf(a) == std::vector<std::pair<SegmentAction, Bytes>>{{Map, 60 * MiB}, {Map, 20 * MiB}});
    CHECK(a.stats().reserved_peak == 80 * MiB); // 110 MiB without expandable segments
    CHECK(a.blockSize(y) == 20 * MiB);
    CHECK(a.blockSize(z) == 50 * MiB);
    // Freeing everything and emptying the cache unmaps every page.
    a.free(y);
    a.free(z);
    a.emptyCache();
    CHECK(a.stats().reserved == 0);
    CHECK(a.segmentEvents().back().action == SegmentAction::Unmap);
    CHECK(a.segmentEvents().back().size == 80 * MiB);

    // A small request maps one 2 MiB page of the small pool's segment.
    Recording s(config);
    s.malloc(100 * KiB);
    CHECK(segmentsOf(s) == std::vector<std::pair<SegmentAction, Bytes>>{{Map, 2 * MiB}});
}

TEST_CASE("max_split_size: oversize blocks are never split and serve only oversize requests", "[allocator]")
{
    AllocatorConfig config;
    config.max_split_size_mb = 40;
    Recording a(config);
    a.free(a.malloc(60 * MiB));
    // 30 MiB is under max_split_size: the cached 60 MiB block may not serve it.
    a.malloc(30 * MiB);
    CHECK(a.stats().reserved == 90 * MiB);
    // 41 MiB is oversize and less than 20 MiB under the 60 MiB block: it takes it whole.
    const AllocationId big = a.malloc(41 * MiB);
    CHECK(a.blockSize(big) == 60 * MiB);
    CHECK(a.stats().reserved == 90 * MiB);
    a.free(big);
    // 39 MiB would leave 21 MiB: still no; a new segment.
    a.malloc(39 * MiB);
    CHECK(a.stats().reserved == 130 * MiB);
}

TEST_CASE("Out of memory: cached segments are released and the segment tried again, then the request fails",
          "[allocator]")
{
    Recording a({}, 100 * MiB, 100 * MiB);
    a.free(a.malloc(60 * MiB)); // cached
    a.malloc(70 * MiB); // 130 MiB would not fit: the cached 60 MiB goes back, then 70 MiB fits
    CHECK(segmentsOf(a)
          == std::vector<std::pair<SegmentAction, Bytes>>{{Alloc, 60 * MiB}, {Free, 60 * MiB}, {Alloc, 70 * MiB}});
    CHECK(a.stats().alloc_retries == 1);
    CHECK(a.stats().ooms == 0);
    CHECK(a.stats().reserved_peak == 70 * MiB);
    a.malloc(40 * MiB); // nothing to release: out of memory, reserved anyway to go on
    CHECK(a.stats().ooms == 1);
    CHECK(a.stats().first_oom_request == 40 * MiB);
    CHECK(a.stats().reserved_peak == 110 * MiB);
}

TEST_CASE("Garbage collection above the threshold of a memory fraction releases the cached blocks unused longest",
          "[allocator]")
{
    // Half of 200 MiB may be reserved; collection starts above 60 % of that, 60 MiB.
    AllocatorConfig config;
    config.per_process_memory_fraction = 0.5;
    config.garbage_collection_threshold = 0.6;
    Recording a(config, 200 * MiB, 200 * MiB);
    const AllocationId x = a.malloc(30 * MiB);
    a.malloc(40 * MiB);
    a.free(x);
    // 35 MiB: no cached block holds it. Reserved is 70 MiB, 10 over the threshold:
    // the cached 30 MiB segment (the only one) goes before a new one, 35 MiB
    // rounded up to 36, is reserved.
    a.malloc(35 * MiB);
    CHECK(segmentsOf(a)
          == std::vector<std::pair<SegmentAction, Bytes>>{
              {Alloc, 30 * MiB}, {Alloc, 40 * MiB}, {Free, 30 * MiB}, {Alloc, 36 * MiB}});
    // Without a fraction PyTorch never collects: the 30 MiB stay cached.
    AllocatorConfig noFraction;
    noFraction.garbage_collection_threshold = 0.6;
    Recording b(noFraction, 200 * MiB, 200 * MiB);
    const AllocationId bx = b.malloc(30 * MiB);
    b.malloc(40 * MiB);
    b.free(bx);
    b.malloc(35 * MiB);
    CHECK(b.stats().reserved == 106 * MiB);
}

TEST_CASE("The fraction caps what may be reserved", "[allocator]")
{
    AllocatorConfig config;
    config.per_process_memory_fraction = 0.25;
    Recording a(config, 400 * MiB, 400 * MiB);
    a.malloc(90 * MiB);
    a.malloc(20 * MiB); // 110 MiB > 100 MiB: out of memory under the fraction
    CHECK(a.stats().ooms == 1);
}
