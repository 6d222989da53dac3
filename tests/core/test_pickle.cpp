// SPDX-License-Identifier: MIT
// The safe unpickler: plain data of every protocol read as Python reads it;
// everything that would import or call refused by name and offset; hostile
// and truncated input a clear error, never a crash or unbounded memory.
#include "core/trace/bytesource.h"
#include "core/trace/pickle.h"

#include <catch2/catch.hpp>
#include <string>

using namespace memledger;
using namespace memledger::pickle;

namespace {

struct Parsed
{
    std::unique_ptr<ByteSource> source;
    std::unique_ptr<Unpickler> vm;
    std::optional<Value> top;
};

// Keeps the bytes alive with the source (fromMemory does not own them).
Parsed parse(const std::string &bytes, Limits limits = {})
{
    static std::vector<std::unique_ptr<std::string>> keep;
    keep.push_back(std::make_unique<std::string>(bytes));
    Parsed p;
    p.source = ByteSource::fromMemory(*keep.back());
    p.vm = std::make_unique<Unpickler>(*p.source, nullptr, limits);
    p.top = p.vm->run();
    return p;
}

std::string errorOf(const std::string &bytes, Limits limits = {})
{
    Parsed p = parse(bytes, limits);
    CHECK_FALSE(p.top);
    return p.vm->error();
}

} // namespace

TEST_CASE("Plain data of protocol 4 reads as Python builds it", "[trace][pickle]")
{
    // pickle.dumps({'a': [1, -2, 3.5, None, True], 'b': (b'xy', 'é'), 'n': 2**40, 'm': -2**63}, protocol=4)
    const std::string bytes("\x80\x04\x95\x49\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01"
                            "\x61\x94\x5d\x94\x28\x4b\x01\x4a\xfe\xff\xff\xff\x47\x40\x0c\x00"
                            "\x00\x00\x00\x00\x00\x4e\x88\x65\x8c\x01\x62\x94\x43\x02\x78\x79"
                            "\x94\x8c\x02\xc3\xa9\x94\x86\x94\x8c\x01\x6e\x94\x8a\x06\x00\x00"
                            "\x00\x00\x00\x01\x8c\x01\x6d\x94\x8a\x08\x00\x00\x00\x00\x00\x00"
                            "\x00\x80\x75\x2e",
                            84);
    Parsed p = parse(bytes);
    INFO(p.vm->error());
    REQUIRE(p.top);
    Unpickler &vm = *p.vm;
    REQUIRE(vm.kind(*p.top) == Kind::Dict);
    CHECK(vm.size(*p.top) == 4);
    const Value a = *vm.find(*p.top, "a");
    REQUIRE(vm.kind(a) == Kind::List);
    REQUIRE(vm.size(a) == 5);
    CHECK(vm.at(a, 0).i == 1);
    CHECK(vm.at(a, 1).i == -2);
    CHECK(vm.at(a, 2).f == 3.5);
    CHECK(vm.at(a, 3).kind == Kind::None);
    CHECK(vm.at(a, 4).kind == Kind::Bool);
    const Value b = *vm.find(*p.top, "b");
    REQUIRE(vm.kind(b) == Kind::Tuple);
    CHECK(vm.kind(vm.at(b, 0)) == Kind::Bytes);
    CHECK(vm.text(vm.at(b, 0)) == "xy");
    CHECK(vm.text(vm.at(b, 1)) == "\xc3\xa9");
    CHECK(vm.find(*p.top, "n")->i == (std::int64_t{1} << 40));
    CHECK(vm.find(*p.top, "m")->i == INT64_MIN);
    CHECK_FALSE(vm.find(*p.top, "zz"));
}

TEST_CASE("Text-protocol numbers, memo and containers", "[trace][pickle]")
{
    // (lp0\nI12\naF1.5\naL-7L\naI01\nag0\na.  : [12, 1.5, -7, True, <the list itself>]
    Parsed p = parse("(lp0\nI12\naF1.5\naL-7L\naI01\nag0\na.");
    INFO(p.vm->error());
    REQUIRE(p.top);
    Unpickler &vm = *p.vm;
    REQUIRE(vm.size(*p.top) == 5);
    CHECK(vm.at(*p.top, 0).i == 12);
    CHECK(vm.at(*p.top, 1).f == 1.5);
    CHECK(vm.at(*p.top, 2).i == -7);
    CHECK(vm.at(*p.top, 3).kind == Kind::Bool);
    CHECK(vm.at(*p.top, 4).id == p.top->id); // a list holding itself, through the memo
}

TEST_CASE("Integers beyond 64 bits are refused with a clear message", "[trace][pickle]")
{
    // 2**64: LONG1 with 9 bytes.
    const std::string big("\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.", 14);
    CHECK(errorOf(big).find("beyond 64 bits") != std::string::npos);
    // -1 written with 12 bytes of sign is fine.
    Parsed p = parse(std::string("\x80\x04\x8a\x0c") + std::string(12, '\xff') + ".");
    REQUIRE(p.top);
    CHECK(p.top->i == -1);
    CHECK(errorOf("I99999999999999999999999\n.").find("not an integer within 64 bits") != std::string::npos);
}

TEST_CASE("Opcodes that import or call are refused by name and offset", "[trace][pickle]")
{
    // pickle.dumps of os.system('echo pwned') via __reduce__, protocol 0.
    const std::string global = "cos\nsystem\n(S'echo pwned'\ntR.";
    CHECK(errorOf(global) == "pickle opcode GLOBAL at byte 0 is refused: a snapshot is data and is never executed");
    // Protocol 4: STACK_GLOBAL after two strings.
    const std::string stackGlobal("\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02id\x85R.", 23);
    CHECK(errorOf(stackGlobal)
          == "pickle opcode STACK_GLOBAL at byte 14 is refused: a snapshot is data and is never executed");
    CHECK(errorOf(std::string("\x80\x02}q\x00(X\x01\x00\x00\x00"
                              "aK\x01ub.",
                              17))
              .find("opcode BUILD at byte 15")
          != std::string::npos);
    CHECK(errorOf("(S'x'\nios\nsystem\n.").find("STRING at byte 1 is not supported") != std::string::npos);
    CHECK(errorOf("\x80\x04\x8f.").find("EMPTY_SET at byte 2 is not supported") != std::string::npos);
    CHECK(errorOf("(ios\nsystem\n.").find("opcode INST at byte 1 is refused") != std::string::npos);
    CHECK(errorOf(std::string("(]o.", 4)).find("opcode OBJ at byte 2 is refused") != std::string::npos);
    for (const auto &[bytes, name] : std::vector<std::pair<std::string, std::string>>{
             {"\x80\x02)\x81.", "NEWOBJ"},
             {"\x80\x04)}\x92.", "NEWOBJ_EX"},
             {"Pid\n.", "PERSID"},
             {"NQ.", "BINPERSID"},
             {"\x80\x02\x82\x01.", "EXT1"},
             {"\x80\x02\x83\x01\x00.", "EXT2"},
             {"\x80\x02\x84\x01\x00\x00\x00.", "EXT4"},
             {"\x80\x05\x97.", "NEXT_BUFFER"},
             {"\x80\x05N\x98.", "READONLY_BUFFER"},
             {"NR.", "REDUCE"},
         }) {
        INFO(name);
        CHECK(errorOf(bytes).find("pickle opcode " + name + " at byte") == 0);
    }
    CHECK(errorOf("\xff.").find("unknown pickle opcode 0xff at byte 0") == 0);
}

TEST_CASE("Hostile shapes fail fast with bounded memory", "[trace][pickle]")
{
    // A 4 GB string length on a short input: refused by the string limit, and a
    // 200 MB one fails at the input's end, without reserving 200 MB.
    CHECK(errorOf(std::string("\x80\x04X\xff\xff\xff\xff"
                              "abc",
                              10))
              .find("over the limit")
          != std::string::npos);
    CHECK(errorOf(std::string("\x80\x04X\x00\x00\x00\x0c"
                              "abc",
                              10))
              .find("truncated pickle")
          == 0);
    CHECK(errorOf(std::string("\x80\x04\x8d\xff\xff\xff\xff\xff\x00\x00\x00", 11)).find("over the limit")
          != std::string::npos);
    // A nesting bomb: MARKs beyond the nesting limit.
    CHECK(errorOf(std::string(100000, '(')).find("nested MARKs") != std::string::npos);
    // Nested lists: ]]]]]... with APPENDs is fine (no recursion), a flood of pushes hits the stack limit.
    Limits small;
    small.max_stack = 1000;
    CHECK(errorOf(std::string(5000, 'N') + ".", small).find("values on the pickle stack") != std::string::npos);
    std::string nested = "]";
    for (int i = 0; i < 200000; ++i)
        nested += "]a";
    Parsed deep = parse(nested + ".");
    CHECK(deep.top);
    // A memo index far away does not allocate up to it.
    Parsed sparse = parse(std::string("N\x72\xff\xff\xff\x7f\x6a\xff\xff\xff\x7f.", 12));
    REQUIRE(sparse.top);
    CHECK(sparse.top->kind == Kind::None);
    CHECK(errorOf("h\x05.").find("memo entry 5 was never stored") != std::string::npos);
    CHECK(errorOf("a.").find("APPEND needs a list and a value") != std::string::npos);
    CHECK(errorOf("}Na.").find("APPEND to a dict") != std::string::npos);
    CHECK(errorOf("e.").find("no MARK") != std::string::npos);
    CHECK(errorOf("(]]a]ss.").find("malformed pickle") == 0);
    CHECK(errorOf("").find("truncated pickle") == 0);
    CHECK(errorOf(".").find("the stack is empty at STOP") != std::string::npos);
    CHECK(errorOf("\x80\x09N.").find("unsupported protocol 9") != std::string::npos);
}

TEST_CASE("A pickle cut at every byte is an error naming the offset, never a crash", "[trace][pickle]")
{
    const std::string whole("\x80\x04\x95\x49\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01"
                            "\x61\x94\x5d\x94\x28\x4b\x01\x4a\xfe\xff\xff\xff\x47\x40\x0c\x00"
                            "\x00\x00\x00\x00\x00\x4e\x88\x65\x8c\x01\x62\x94\x43\x02\x78\x79"
                            "\x94\x8c\x02\xc3\xa9\x94\x86\x94\x8c\x01\x6e\x94\x8a\x06\x00\x00"
                            "\x00\x00\x00\x01\x8c\x01\x6d\x94\x8a\x08\x00\x00\x00\x00\x00\x00"
                            "\x00\x80\x75\x2e",
                            84);
    REQUIRE(parse(whole).top);
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
        INFO("cut at " << cut);
        const std::string e = errorOf(whole.substr(0, cut));
        CHECK(e.find("truncated pickle: the data ends at byte " + std::to_string(cut)) == 0);
    }
}
