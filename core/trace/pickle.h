// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace memledger {

class ByteSource;

namespace pickle {

// A safe unpickler for Python pickle protocols 0 to 5 that builds plain data
// only: dicts, lists, tuples, str, bytes / bytearray, ints within int64,
// floats, booleans and None. Every opcode that would import or call anything
// (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, PERSID, EXT*, ...)
// is refused by name and byte offset: a pickle is data and is never executed.
// The opcode semantics follow CPython's Lib/pickle.py (_Unpickler) and the
// opcode table of Lib/pickletools.py.
//
// Memory: a Consumer can take items as they are appended to a container (a
// snapshot's events, one dict at a time), convert them to something compact
// and release them, so that the object tree never holds the whole file.

enum class Kind : std::uint8_t {
    None,
    Bool,
    Int,
    Float,
    Str,
    Bytes,
    List,
    Tuple,
    Dict,
    Converted, ///< a container a Consumer turned into a number (aux), e.g. a frame list into a stack index
    Released, ///< a container a Consumer took and released; referring to it again is an error
};

std::string_view kindName(Kind kind); // "dict", "list", "str", ... as Python names them

/// A value on the unpickler's stack, in its memo or in a container. Containers,
/// strings and bytes are handles into the Unpickler that made them.
struct Value
{
    Kind kind = Kind::None;
    std::uint32_t gen = 0; ///< containers: the generation of their slot (a released slot's handles go stale)
    union
    {
        std::int64_t i = 0;
        double f;
        std::uint32_t id; ///< a container's slot or a string's index
    };

    static Value none() { return {}; }
    static Value boolean(bool b)
    {
        Value v;
        v.kind = Kind::Bool;
        v.i = b ? 1 : 0;
        return v;
    }
    static Value integer(std::int64_t n)
    {
        Value v;
        v.kind = Kind::Int;
        v.i = n;
        return v;
    }
    static Value real(double x)
    {
        Value v;
        v.kind = Kind::Float;
        v.f = x;
        return v;
    }
    bool isContainer() const { return kind == Kind::List || kind == Kind::Tuple || kind == Kind::Dict; }
};

struct Limits
{
    std::size_t max_stack = std::size_t{1} << 20; ///< values on the stack at once
    std::size_t max_nesting = 1000; ///< open MARKs: nesting depth of containers being built
    std::uint64_t max_string = std::uint64_t{1} << 28; ///< bytes of one str / bytes
    std::uint64_t max_values = std::uint64_t{1} << 26; ///< values held in live containers and the memo
    std::uint64_t progress_every = std::uint64_t{4} << 20; ///< bytes of input between Consumer::onProgress calls
};

class Unpickler;

/// Sees containers as they are created and items as they are added, so that a
/// reader can take what it needs and let the rest go.
class Consumer
{
public:
    virtual ~Consumer() = default;
    /// A list or dict (`created`) was made. `owner` is the container it is
    /// being built into as far as the stack shows (None when unknown), at
    /// `index` (a list) or under `key` (a dict). Returns a role kept on the
    /// container (0: none); Unpickler::setAux may tag it further. The guess
    /// can be wrong for unusual pickles: onItem sees where it really goes.
    virtual std::uint8_t onCreate(Unpickler &, Value created, Value owner, std::int64_t index, Value key)
    {
        (void)created, (void)owner, (void)index, (void)key;
        return 0;
    }
    /// `item` is being added to `container` (whose role is not 0) at `index`
    /// (a list) or under `key` (a dict). Returns true when the consumer took it:
    /// then it is not stored. Stops the unpickler with Unpickler::fail().
    virtual bool onItem(Unpickler &, Value container, std::int64_t index, Value key, Value item)
    {
        (void)container, (void)index, (void)key, (void)item;
        return false;
    }
    /// Every Limits::progress_every bytes; false cancels ("import cancelled").
    virtual bool onProgress(std::uint64_t bytesRead, std::uint64_t bytesTotal)
    {
        (void)bytesRead, (void)bytesTotal;
        return true;
    }
};

class Unpickler
{
public:
    explicit Unpickler(ByteSource &source, Consumer *consumer = nullptr, Limits limits = {});
    Unpickler(const Unpickler &) = delete;
    Unpickler &operator=(const Unpickler &) = delete;

    /// Runs to STOP: the top-level value, or nullopt with error() set
    /// ("pickle opcode GLOBAL at byte 12 is refused: ...").
    std::optional<Value> run();
    const std::string &error() const { return m_error; }
    bool cancelled() const { return m_cancelled; }
    /// Offset of the opcode being executed, in the (decompressed) stream.
    std::uint64_t offset() const { return m_opOffset; }

    /// Stops the run with `message` (a Consumer's verdict on the data).
    void fail(std::string message);

    // Reading values. A stale handle (its container released) reads as Released.
    Kind kind(Value v) const;
    std::uint8_t role(Value v) const;
    std::int64_t aux(Value v) const; ///< Converted: the number; containers: 0 unless set
    void setAux(Value v, std::int64_t aux);
    std::string_view text(Value v) const; ///< Str and Bytes; empty otherwise
    std::size_t size(Value v) const; ///< items of a list / tuple, pairs of a dict
    /// A container's items at once (dicts: key, value, key, value, ...);
    /// valid until the unpickler runs on. Empty for anything else.
    std::span<const Value> items(Value v) const;
    Value at(Value v, std::size_t i) const; ///< list / tuple item
    Value keyAt(Value dict, std::size_t i) const;
    Value valueAt(Value dict, std::size_t i) const;
    std::optional<Value> find(Value dict, std::string_view key) const; ///< the last pair with that str key

    /// Frees a container the consumer took: later references to it (through
    /// the memo) fail clearly. Containers inside it that were never memoized
    /// go with it.
    void release(Value v);
    /// Keeps a container as a number only (e.g. a frame list as its stack
    /// index): its items are freed, and later references read Kind::Converted.
    void convert(Value v, std::int64_t aux);

private:
    struct Object
    {
        Kind kind = Kind::List;
        std::uint8_t role = 0;
        bool memoized = false;
        std::uint32_t gen = 0;
        std::int64_t aux = 0;
        std::int64_t added = 0; ///< lists: items added so far, those a Consumer took included
        std::vector<Value> items; ///< dicts: key, value, key, value, ...
    };

    const Object *object(Value v) const;
    Object *object(Value v);
    Value newContainer(Kind kind);
    void created(Value v, std::size_t p);
    bool addItem(Value container, Value key, Value item);
    void freeSlot(std::uint32_t slot);
    Value internString(std::string_view s, Kind kind);
    bool execute(std::uint8_t op);
    bool refuse(std::uint8_t op);

    // The opcode table (pickle.cpp): pickletools' name of each opcode, for
    // messages (null for a byte that is no opcode), and its handler, refuse
    // for any the reader does not run.
    using Handler = bool (Unpickler::*)(std::uint8_t op);
    struct Opcode
    {
        const char *name;
        Handler run;
    };
    static const std::array<Opcode, 256> kOpcodes;
    static const char *opcodeName(std::uint8_t op) { return kOpcodes[op].name; }
    // The handlers, one per group of opcodes that share their work; each
    // reads its arguments and returns false with the error set.
    bool opProto(std::uint8_t op);
    bool opFrame(std::uint8_t op);
    bool opConstant(std::uint8_t op);
    bool opBinInt(std::uint8_t op);
    bool opLong(std::uint8_t op);
    bool opBinFloat(std::uint8_t op);
    bool opTextInt(std::uint8_t op);
    bool opTextFloat(std::uint8_t op);
    bool opString(std::uint8_t op);
    bool opEmptyListOrDict(std::uint8_t op);
    bool opEmptyTuple(std::uint8_t op);
    bool opSmallTuple(std::uint8_t op);
    bool opMarkedContainer(std::uint8_t op);
    bool opAppend(std::uint8_t op);
    bool opAppends(std::uint8_t op);
    bool opSetItem(std::uint8_t op);
    bool opSetItems(std::uint8_t op);
    bool opMark(std::uint8_t op);
    bool opPop(std::uint8_t op);
    bool opPopMark(std::uint8_t op);
    bool opDup(std::uint8_t op);
    bool opMemoize(std::uint8_t op);
    bool opBinPut(std::uint8_t op);
    bool opBinGet(std::uint8_t op);
    bool opTextMemo(std::uint8_t op);
    bool malformed(const std::string &what);

    // Input.
    bool fill(std::size_t n);
    bool need(std::size_t n) { return static_cast<std::size_t>(m_end - m_p) >= n || fill(n); }
    bool readExact(char *out, std::size_t n);
    bool readString(std::uint64_t n, std::string &out);
    bool readLine(std::string &out);
    std::uint64_t position() const { return m_bufferStart + static_cast<std::uint64_t>(m_p - m_buffer.data()); }

    bool push(Value v)
    {
        if (m_stack.size() >= m_limits.max_stack)
            return stackFull();
        m_stack.push_back(v);
        return true;
    }
    bool stackFull();
    bool addItems(std::size_t owner, std::size_t first, bool pairs);
    bool popMark(std::size_t &mark);
    bool memoPut(std::uint64_t index);
    bool memoGet(std::uint64_t index);

    ByteSource &m_source;
    Consumer *m_consumer;
    Limits m_limits;
    std::vector<char> m_buffer;
    const char *m_p = nullptr;
    const char *m_end = nullptr;
    std::uint64_t m_bufferStart = 0;
    std::uint64_t m_nextProgress = 0;
    std::uint64_t m_opOffset = 0;
    std::uint8_t m_op = 0; ///< the opcode being executed

    std::vector<Value> m_stack;
    std::vector<std::size_t> m_marks;
    std::vector<Value> m_memo;
    std::unordered_map<std::uint64_t, Value> m_sparseMemo;
    std::vector<Object> m_objects;
    std::vector<std::uint32_t> m_freeSlots;
    std::vector<std::uint32_t> m_releaseWork;
    std::uint64_t m_liveValues = 0;
    std::deque<std::string> m_strings;
    std::unordered_map<std::string_view, std::uint32_t> m_stringIndex;
    std::string m_scratch;
    std::string m_error;
    bool m_cancelled = false;
};

} // namespace pickle
} // namespace memledger
