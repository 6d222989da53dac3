#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the small snapshot fixtures of tests/core/test_snapshot.cpp and
test_replay.cpp with Python's own pickle (no torch needed): dicts shaped as
torch.cuda.memory._snapshot() returns them (torch/csrc/cuda/memory_snapshot.cpp),
frames shared between events as PyTorch shares them, so that the pickle's memo
refers back to them. Run from this folder: python3 make_fixtures.py
The expected figures are worked out by hand in the tests' comments."""
import gzip
import pickle

LINEAR = {"filename": "/usr/lib/python3/torch/nn/modules/linear.py", "line": 125, "name": "forward"}
TRAIN = {"filename": "train.py", "line": 42, "name": "step"}
STACK_AB = [LINEAR, TRAIN]  # one list object, shared by two events (memo)
STACK_C = [TRAIN]


def ev(action, addr, size, t, frames=None, stream=0):
    e = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t}
    e["frames"] = frames if frames is not None else []
    return e


def block(size, requested, state, frames=None):
    return {"address": 0, "size": size, "requested_size": requested, "state": state,
            "frames": frames if frames is not None else []}


def basic():
    seg = {"device": 0, "address": 0x1000, "total_size": 65536, "allocated_size": 0, "active_size": 0,
           "requested_size": 0, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
           "is_expandable": False, "frames": [],
           "blocks": [block(0x1000, 0x1000, "inactive"),
                      block(0x1000, 200, "active_allocated", STACK_AB),    # 0x2000: B, allocated in the window
                      block(0x1000, 50, "active_allocated", STACK_C),      # 0x3000: C, allocated in the window
                      block(0x1000, 1000, "active_allocated", [TRAIN]),    # 0x4000: E, before the window
                      block(0x1000, 77, "active_pending_free"),            # 0x5000: not counted
                      block(65536 - 0x5000, 0, "inactive")]}
    trace = [ev("segment_alloc", 0x100000, 2097152, 0),
             ev("alloc", 0x1000, 100, 1, STACK_AB),
             ev("alloc", 0x2000, 200, 2, STACK_AB),
             ev("free_requested", 0x1000, 100, 3, STACK_AB),
             ev("free_completed", 0x1000, 100, 4, STACK_AB),
             ev("alloc", 0x3000, 50, 5, STACK_C),
             ev("free_completed", 0x9000, 400, 6, [LINEAR]),
             ev("free_requested", 0x2000, 200, 7),
             ev("segment_free", 0x100000, 2097152, 8),
             {"action": "oom", "device_free": 123, "size": 4096, "stream": 0, "time_us": 9, "frames": []},
             ev("snapshot", 0, 0, 10)]
    return {"segments": [seg], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "roundup_power2_divisions": {"1": 0, "2": 0}},
            "external_annotations": [
                {"name": "forward", "stage": "START", "device": 0, "time_us": 1},
                {"name": "forward", "stage": "END", "device": 0, "time_us": 5},
                {"name": "other_device", "stage": "START", "device": 1, "time_us": 2},
                {"name": "other_device", "stage": "END", "device": 1, "time_us": 3},
                {"name": "backward", "stage": "START", "device": 0, "time_us": 6},
                {"name": "backward", "stage": "END", "device": 0, "time_us": 8}]}


def multidevice():
    def seg(device, address, total, blocks):
        return {"device": device, "address": address, "total_size": total, "stream": 0, "blocks": blocks}
    return {"segments": [seg(0, 0x10000, 4096, [block(4096, 4000, "active_allocated")]),
                         seg(2, 0x20000, 8192, [block(1024, 1000, "active_allocated"),
                                                block(7168, 0, "inactive")])],
            "device_traces": [[],
                              [ev("alloc", 0x500, 10, 1), ev("alloc", 0x600, 20, 2), ev("free_completed", 0x500, 10, 3)],
                              [ev("alloc", 0x20400, 300, 1), ev("free_completed", 0x20400, 300, 2)]]}


def multidevice_single():
    # Device 0 holds one event (APPEND inside device_traces' APPENDS batch).
    return {"segments": [], "device_traces": [[ev("alloc", 0x100, 64, 1, STACK_C)],
                                              [ev("alloc", 0x200, 8, 1), ev("alloc", 0x300, 8, 2)]]}


def single():
    # One device, one event, one-item lists and a one-key dict: Python writes
    # APPEND / SETITEM instead of APPENDS / SETITEMS.
    return {"device_traces": [[{"action": "alloc", "addr": 64, "size": 512, "frames": [TRAIN]}]], "segments": []}


def empty():
    return {"segments": [], "device_traces": [[]]}


MiB = 1 << 20


def settings(expandable=False, max_split=-1, gc=0.0):
    """allocator_settings as torch/csrc/cuda/memory_snapshot.cpp writes them."""
    return {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": max_split, "garbage_collection_threshold": gc,
            "expandable_segments": expandable, "pinned_num_register_threads": 1,
            "release_lock_on_cudamalloc": False, "pinned_use_cuda_host_register": False,
            "roundup_power2_divisions": {"1": 0, "2": 0}}


class Trace:
    """A device trace written event by event, in the order the caching allocator
    records them: a segment event before the alloc that caused it."""

    def __init__(self):
        self.events = []

    def seg(self, action, addr, size, stream=0):
        self.events.append(ev(action, addr, size, len(self.events), stream=stream))

    def alloc(self, addr, size, stream=0):
        self.events.append(ev("alloc", addr, size, len(self.events), stream=stream))

    def free(self, addr, size, stream=0):
        self.events.append(ev("free_requested", addr, size, len(self.events), stream=stream))
        self.events.append(ev("free_completed", addr, size, len(self.events), stream=stream))

    def snapshot(self, alloc_settings):
        return {"segments": [], "device_traces": [self.events], "allocator_settings": alloc_settings}


def allocator_rules():
    """The default rules, worked by hand (c10/cuda/CUDACachingAllocator.cpp):
    the expected segment events are written here, not computed."""
    t = Trace()
    t.seg("segment_alloc", 0x10000000, 2 * MiB)  # 1,000 B: small pool, a 2 MiB segment
    t.alloc(0x10000000, 1000)
    t.seg("segment_alloc", 0x20000000, 20 * MiB)  # 3 MiB: large pool under 10 MiB, a 20 MiB segment
    t.alloc(0x20000000, 3 * MiB)
    t.alloc(0x20300000, 3 * MiB)  # the 17 MiB left of it (split off: more than 1 MiB)
    # 15 MiB: more than the 14 MiB left; rounded up to 2 MiB, a 16 MiB segment (1 MiB left: not split)
    t.seg("segment_alloc", 0x30000000, 16 * MiB)
    t.alloc(0x30000000, 15 * MiB)
    t.free(0x30000000, 15 * MiB)
    t.alloc(0x30000000, 15 * MiB)  # the cached 16 MiB block
    t.seg("segment_alloc", 0x40000000, 50 * MiB)
    t.alloc(0x40000000, 50 * MiB)
    t.free(0x40000000, 50 * MiB)
    t.alloc(0x40000000, 20 * MiB)  # best fit: the cached 50 MiB block, split
    t.seg("segment_alloc", 0x50000000, 40 * MiB)  # 40 MiB: the 30 MiB left is too small
    t.alloc(0x50000000, 40 * MiB)
    t.seg("segment_alloc", 0x60000000, 2 * MiB, stream=7)  # another stream: its own pool
    t.alloc(0x60000000, 1000, stream=7)
    t.alloc(0x10000200, 1000)  # back on stream 0: the first small segment
    return t.snapshot(settings())


def allocator_expandable():
    """expandable_segments:True: one segment per pool and stream, mapped by pages."""
    t = Trace()
    t.seg("segment_map", 0x7f0000000000, 60 * MiB)  # three 20 MiB pages
    t.alloc(0x7f0000000000, 60 * MiB)
    t.free(0x7f0000000000, 60 * MiB)
    t.alloc(0x7f0000000000, 20 * MiB)  # split: any remainder of 512 B or more is
    t.seg("segment_map", 0x7f0003c00000, 20 * MiB)  # 50 MiB: the 40 MiB free, and one more page after them
    t.alloc(0x7f0001400000, 50 * MiB)
    t.seg("segment_map", 0x7e0000000000, 2 * MiB)  # the small pool's segment, one 2 MiB page
    t.alloc(0x7e0000000000, 100 * 1024)
    return t.snapshot(settings(expandable=True))


def allocator_max_split():
    """max_split_size_mb:40: blocks of 40 MiB or more are never split."""
    t = Trace()
    t.seg("segment_alloc", 0x10000000, 60 * MiB)
    t.alloc(0x10000000, 60 * MiB)
    t.free(0x10000000, 60 * MiB)
    t.seg("segment_alloc", 0x20000000, 30 * MiB)  # under 40 MiB: the cached oversize block may not serve it
    t.alloc(0x20000000, 30 * MiB)
    t.alloc(0x10000000, 41 * MiB)  # oversize, less than 20 MiB under the block: the whole 60 MiB
    return t.snapshot(settings(max_split=40 * MiB))


def allocator_retry():
    """A device of 100 MiB for PyTorch: a cudaMalloc that fails releases the
    cached segments and is tried again."""
    t = Trace()
    t.seg("segment_alloc", 0x10000000, 60 * MiB)
    t.alloc(0x10000000, 60 * MiB)
    t.free(0x10000000, 60 * MiB)
    t.seg("segment_free", 0x10000000, 60 * MiB)
    t.seg("segment_alloc", 0x20000000, 70 * MiB)
    t.alloc(0x20000000, 70 * MiB)
    return t.snapshot(settings())


def write(name, obj, protocol=4):
    with open(name, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


if __name__ == "__main__":
    for p in (1, 2, 3, 4, 5):
        write(f"basic-p{p}.pickle", basic(), p)
    with gzip.GzipFile("basic.pickle.gz", "wb", mtime=0) as f:
        f.write(pickle.dumps(basic(), protocol=4))
    write("basic-p0.pickle", basic(), 0)  # text protocol: refused (UNICODE), with its name
    write("multidevice.pickle", multidevice())
    write("single.pickle", single())
    write("multidevice-single.pickle", multidevice_single())
    write("empty.pickle", empty())
    write("allocator-rules.pickle", allocator_rules())
    write("allocator-expandable.pickle", allocator_expandable())
    write("allocator-max-split.pickle", allocator_max_split())
    write("allocator-retry.pickle", allocator_retry())
    write("toplevel-list.pickle", [basic()["segments"]])
    noaddr = basic()
    del noaddr["device_traces"][0][1]["addr"]
    write("bad-noaddr.pickle", noaddr)
    write("bad-traces-dict.pickle", {"segments": [], "device_traces": {"0": []}})
    badsize = basic()
    badsize["segments"][0]["blocks"][2]["size"] = "big"
    write("bad-blocksize.pickle", badsize)
