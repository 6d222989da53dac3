// SPDX-License-Identifier: MIT
// Opcode semantics: CPython Lib/pickle.py (_Unpickler.m_load*), opcode table
// and argument encodings: Lib/pickletools.py.
#include "core/trace/pickle.h"

#include "core/trace/bytesource.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace memledger::pickle {

namespace {

// The input buffer starts small (a short pickle costs no megabyte) and
// doubles at each refill up to 1 MiB.
constexpr std::size_t kFirstBufferSize = std::size_t{1} << 12;
constexpr std::size_t kBufferSize = std::size_t{1} << 20;
constexpr std::size_t kMaxLine = 4096; // text-protocol arguments: a number or a memo index

std::uint64_t littleEndian(const char *p, int n)
{
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

std::string hexByte(std::uint8_t b)
{
    const char *digits = "0123456789abcdef";
    return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

} // namespace

std::string_view kindName(Kind kind)
{
    switch (kind) {
    case Kind::None:
        return "None";
    case Kind::Bool:
        return "bool";
    case Kind::Int:
        return "int";
    case Kind::Float:
        return "float";
    case Kind::Str:
        return "str";
    case Kind::Bytes:
        return "bytes";
    case Kind::List:
        return "list";
    case Kind::Tuple:
        return "tuple";
    case Kind::Dict:
        return "dict";
    case Kind::Converted:
        return "converted object";
    case Kind::Released:
        return "released object";
    }
    return "?";
}

Unpickler::Unpickler(ByteSource &source, Consumer *consumer, Limits limits)
    : m_source(source)
    , m_consumer(consumer)
    , m_limits(limits)
    , m_buffer(kFirstBufferSize)
{
    m_p = m_end = m_buffer.data();
    m_nextProgress = m_limits.progress_every;
}

// ---------------------------------------------------------------- input

bool Unpickler::fill(std::size_t n)
{
    if (static_cast<std::size_t>(m_end - m_p) >= n)
        return true;
    const std::size_t have = static_cast<std::size_t>(m_end - m_p);
    const std::size_t offset = static_cast<std::size_t>(m_p - m_buffer.data()); // m_p dies with a resize
    m_bufferStart += offset;
    if (m_bufferStart > 0 && m_buffer.size() < kBufferSize)
        m_buffer.resize(std::min(kBufferSize, 2 * m_buffer.size()));
    if (m_buffer.size() < n)
        m_buffer.resize(n);
    std::memmove(m_buffer.data(), m_buffer.data() + offset, have);
    std::size_t total = have;
    while (total < n) {
        const std::size_t got = m_source.read(m_buffer.data() + total, m_buffer.size() - total);
        if (got == 0)
            break;
        total += got;
    }
    m_p = m_buffer.data();
    m_end = m_p + total;
    if (m_consumer && m_bufferStart + total >= m_nextProgress) {
        m_nextProgress = m_bufferStart + total + m_limits.progress_every;
        if (!m_consumer->onProgress(m_source.bytesConsumed(), m_source.bytesTotal())) {
            m_cancelled = true;
            m_error = "import cancelled";
            return false;
        }
    }
    if (total >= n)
        return true;
    if (!m_source.error().empty()) {
        m_error
            = "cannot read the pickle after byte " + std::to_string(m_bufferStart + total) + ": " + m_source.error();
    } else {
        const char *name = opcodeName(m_op);
        m_error = "truncated pickle: the data ends at byte " + std::to_string(m_bufferStart + total) + ", inside "
                  + (name ? name : "the opcode") + " at byte " + std::to_string(m_opOffset);
    }
    return false;
}

bool Unpickler::readExact(char *out, std::size_t n)
{
    if (!need(n))
        return false;
    std::memcpy(out, m_p, n);
    m_p += n;
    return true;
}

// A long string arrives piece by piece: memory grows with the bytes actually
// there, so a 4 GB length prefix on a short file fails at its end, fast.
bool Unpickler::readString(std::uint64_t n, std::string &out)
{
    out.clear();
    if (n > m_limits.max_string)
        return malformed("a string of " + std::to_string(n) + " bytes is over the limit of "
                         + std::to_string(m_limits.max_string) + " bytes");
    while (out.size() < n) {
        if (!need(1))
            return false;
        const std::size_t k = std::min<std::uint64_t>(n - out.size(), static_cast<std::size_t>(m_end - m_p));
        out.append(m_p, k);
        m_p += k;
    }
    return true;
}

bool Unpickler::readLine(std::string &out)
{
    out.clear();
    for (;;) {
        if (m_p == m_end && !fill(1))
            return false;
        const char c = *m_p++;
        if (c == '\n')
            return true;
        if (out.size() >= kMaxLine)
            return malformed("an argument line longer than " + std::to_string(kMaxLine) + " bytes");
        out.push_back(c);
    }
}

// ---------------------------------------------------------------- objects

const Unpickler::Object *Unpickler::object(Value v) const
{
    if (!v.isContainer() || v.id >= m_objects.size())
        return nullptr;
    const Object &o = m_objects[v.id];
    return o.gen == v.gen ? &o : nullptr;
}

Unpickler::Object *Unpickler::object(Value v)
{
    return const_cast<Object *>(static_cast<const Unpickler *>(this)->object(v));
}

Kind Unpickler::kind(Value v) const
{
    if (!v.isContainer())
        return v.kind;
    const Object *o = object(v);
    return o ? o->kind : Kind::Released;
}

std::uint8_t Unpickler::role(Value v) const
{
    const Object *o = object(v);
    return o ? o->role : 0;
}

std::int64_t Unpickler::aux(Value v) const
{
    const Object *o = object(v);
    return o ? o->aux : 0;
}

void Unpickler::setAux(Value v, std::int64_t aux)
{
    if (Object *o = object(v))
        o->aux = aux;
}

std::string_view Unpickler::text(Value v) const
{
    if ((v.kind != Kind::Str && v.kind != Kind::Bytes) || v.id >= m_strings.size())
        return {};
    return m_strings[v.id];
}

std::size_t Unpickler::size(Value v) const
{
    const Object *o = object(v);
    if (!o || o->kind == Kind::Converted)
        return 0;
    return o->kind == Kind::Dict ? o->items.size() / 2 : o->items.size();
}

std::span<const Value> Unpickler::items(Value v) const
{
    const Object *o = object(v);
    if (!o || o->kind == Kind::Converted)
        return {};
    return o->items;
}

Value Unpickler::at(Value v, std::size_t i) const
{
    const Object *o = object(v);
    if (!o || (o->kind != Kind::List && o->kind != Kind::Tuple) || i >= o->items.size())
        return {};
    return o->items[i];
}

Value Unpickler::keyAt(Value dict, std::size_t i) const
{
    const Object *o = object(dict);
    if (!o || o->kind != Kind::Dict || 2 * i >= o->items.size())
        return {};
    return o->items[2 * i];
}

Value Unpickler::valueAt(Value dict, std::size_t i) const
{
    const Object *o = object(dict);
    if (!o || o->kind != Kind::Dict || 2 * i + 1 >= o->items.size())
        return {};
    return o->items[2 * i + 1];
}

std::optional<Value> Unpickler::find(Value dict, std::string_view key) const
{
    const Object *o = object(dict);
    if (!o || o->kind != Kind::Dict)
        return std::nullopt;
    // Python keeps the last value set for a key.
    for (std::size_t i = o->items.size(); i >= 2; i -= 2) {
        const Value k = o->items[i - 2];
        if (k.kind == Kind::Str && text(k) == key)
            return o->items[i - 1];
    }
    return std::nullopt;
}

Value Unpickler::newContainer(Kind kind)
{
    std::uint32_t slot;
    if (!m_freeSlots.empty()) {
        slot = m_freeSlots.back();
        m_freeSlots.pop_back();
    } else {
        slot = static_cast<std::uint32_t>(m_objects.size());
        m_objects.emplace_back();
    }
    Object &o = m_objects[slot];
    o.kind = kind;
    o.role = 0;
    o.memoized = false;
    o.aux = 0;
    o.added = 0;
    Value v;
    v.kind = kind;
    v.gen = o.gen;
    v.id = slot;
    return v;
}

void Unpickler::freeSlot(std::uint32_t slot)
{
    Object &o = m_objects[slot];
    m_liveValues -= o.items.size();
    // A freed slot is soon reused by the next event dict: keep a small
    // buffer, so that a snapshot's millions of events cost no allocation each.
    if (o.items.capacity() > 64)
        std::vector<Value>().swap(o.items);
    else
        o.items.clear();
    o.kind = Kind::Released;
    ++o.gen; // every handle to it goes stale
    m_freeSlots.push_back(slot);
}

void Unpickler::release(Value v)
{
    if (!object(v))
        return;
    // Containers inside that were never memoized cannot be referred to
    // again: they go too (a worklist, not recursion: nesting is unbounded).
    std::vector<std::uint32_t> &work = m_releaseWork;
    work.assign(1, v.id);
    while (!work.empty()) {
        const std::uint32_t slot = work.back();
        work.pop_back();
        for (const Value &item : m_objects[slot].items) {
            if (!item.isContainer())
                continue;
            const Object *child = object(item);
            if (child && !child->memoized && child->kind != Kind::Converted)
                work.push_back(item.id);
        }
        freeSlot(slot);
    }
}

void Unpickler::convert(Value v, std::int64_t aux)
{
    Object *o = object(v);
    if (!o)
        return;
    if (!o->memoized) {
        release(v); // nothing can refer to it again
        return;
    }
    m_liveValues -= o->items.size();
    std::vector<Value>().swap(o->items);
    o->kind = Kind::Converted;
    o->aux = aux;
}

Value Unpickler::internString(std::string_view s, Kind kind)
{
    Value v;
    v.kind = kind;
    const auto it = m_stringIndex.find(s);
    if (it != m_stringIndex.end()) {
        v.id = it->second;
        return v;
    }
    v.id = static_cast<std::uint32_t>(m_strings.size());
    m_strings.emplace_back(s);
    m_stringIndex.emplace(m_strings.back(), v.id);
    return v;
}

// Where a new container goes, as far as the stack shows: an item of the batch
// above the innermost MARK (APPENDS / SETITEMS), or the single item of an
// APPEND / SETITEM to come. A guess (a list holding one item is appended to
// after that item is built), so the consumer checks it in onItem.
void Unpickler::created(Value v, std::size_t p)
{
    if (!m_consumer)
        return;
    Value owner, key;
    std::int64_t index = -1;
    const std::size_t m = m_marks.empty() ? 0 : m_marks.back();
    bool found = false;
    if (!m_marks.empty() && m > 0 && p >= m) {
        const Object *o = object(m_stack[m - 1]);
        const std::size_t n = p - m;
        if (o && o->kind == Kind::List) {
            owner = m_stack[m - 1];
            index = o->added + static_cast<std::int64_t>(n);
            found = true;
        } else if (o && o->kind == Kind::Dict && n % 2 == 1 && m_stack[p - 1].kind == Kind::Str) {
            owner = m_stack[m - 1];
            key = m_stack[p - 1];
            found = true;
        }
    }
    if (!found && p >= m + 1) {
        const Object *o = object(m_stack[p - 1]);
        if (o && o->kind == Kind::List) {
            owner = m_stack[p - 1];
            index = o->added;
        } else if (p >= m + 2 && m_stack[p - 1].kind == Kind::Str) {
            const Object *d = object(m_stack[p - 2]);
            if (d && d->kind == Kind::Dict) {
                owner = m_stack[p - 2];
                key = m_stack[p - 1];
            }
        }
    }
    const std::uint8_t role = m_consumer->onCreate(*this, v, owner, index, key);
    if (Object *o = object(v))
        o->role = role;
}

bool Unpickler::addItem(Value container, Value key, Value item)
{
    Object *o = object(container);
    if (!o)
        return malformed("adding to an object that was already released");
    if (o->role != 0 && m_consumer) {
        const std::int64_t index = o->kind == Kind::List ? o->added++ : -1;
        const bool taken = m_consumer->onItem(*this, container, index, key, item);
        if (!m_error.empty())
            return false;
        if (taken)
            return true;
        o = object(container); // the consumer may have created or freed slots
        if (!o)
            return malformed("adding to an object that was already released");
    }
    const std::uint64_t n = o->kind == Kind::Dict ? 2 : 1;
    if (m_liveValues + n > m_limits.max_values)
        return malformed("the pickle holds more than " + std::to_string(m_limits.max_values)
                         + " values outside what the reader converts");
    m_liveValues += n;
    if (o->kind == Kind::Dict) {
        o->items.push_back(key);
    } else if (o->role == 0 || !m_consumer) {
        ++o->added;
    }
    o->items.push_back(item);
    return true;
}

// ---------------------------------------------------------------- stack and memo

bool Unpickler::stackFull()
{
    return malformed("more than " + std::to_string(m_limits.max_stack) + " values on the pickle stack");
}

// APPENDS / SETITEMS: the items above the mark at `first` into m_stack[owner].
// Containers nobody watches take them in one go.
bool Unpickler::addItems(std::size_t owner, std::size_t first, bool pairs)
{
    Object *o = object(m_stack[owner]);
    const std::size_t n = m_stack.size() - first;
    if (pairs)
        for (std::size_t i = first; i < m_stack.size(); i += 2)
            if (m_stack[i].kind == Kind::List || m_stack[i].kind == Kind::Dict)
                return malformed("a list or dict as a dict key");
    if (o && (o->role == 0 || !m_consumer)) {
        if (m_liveValues + n > m_limits.max_values)
            return malformed("the pickle holds more than " + std::to_string(m_limits.max_values)
                             + " values outside what the reader converts");
        m_liveValues += n;
        o->items.insert(o->items.end(), m_stack.begin() + static_cast<std::ptrdiff_t>(first), m_stack.end());
        if (!pairs)
            o->added += static_cast<std::int64_t>(n);
    } else {
        for (std::size_t i = first; i < m_stack.size(); i += pairs ? 2 : 1)
            if (!addItem(m_stack[owner], pairs ? m_stack[i] : Value{}, m_stack[pairs ? i + 1 : i]))
                return false;
    }
    m_stack.resize(first);
    return true;
}

bool Unpickler::popMark(std::size_t &mark)
{
    if (m_marks.empty())
        return malformed("no MARK before it");
    mark = m_marks.back();
    m_marks.pop_back();
    return true;
}

bool Unpickler::memoPut(std::uint64_t index)
{
    if (m_stack.empty() || (!m_marks.empty() && m_marks.back() == m_stack.size()))
        return malformed("nothing to memoize");
    const Value v = m_stack.back();
    if (Object *o = object(v))
        o->memoized = true;
    if (m_liveValues + 1 > m_limits.max_values)
        return malformed("the memo holds more than " + std::to_string(m_limits.max_values) + " values");
    // Python's pickler numbers the memo 0, 1, 2, ...: a vector; anything else a map.
    if (index < m_memo.size()) {
        m_memo[index] = v;
        return true;
    }
    if (index == m_memo.size()) {
        ++m_liveValues;
        m_memo.push_back(v);
        return true;
    }
    ++m_liveValues;
    m_sparseMemo[index] = v;
    return true;
}

bool Unpickler::memoGet(std::uint64_t index)
{
    Value v;
    if (index < m_memo.size()) {
        v = m_memo[index];
    } else {
        const auto it = m_sparseMemo.find(index);
        if (it == m_sparseMemo.end())
            return malformed("memo entry " + std::to_string(index) + " was never stored");
        v = it->second;
    }
    if (v.isContainer() && !object(v))
        return malformed("memo entry " + std::to_string(index)
                         + " refers to an object the reader already converted and released");
    return push(v);
}

// ---------------------------------------------------------------- errors

void Unpickler::fail(std::string message)
{
    if (m_error.empty())
        m_error = std::move(message);
}

bool Unpickler::malformed(const std::string &what)
{
    const char *name = opcodeName(m_op);
    fail(std::string("malformed pickle at byte ") + std::to_string(m_opOffset) + " (" + (name ? name : "opcode")
         + "): " + what);
    return false;
}

bool Unpickler::refuse(std::uint8_t op)
{
    const char *name = opcodeName(op);
    if (!name) {
        fail("unknown pickle opcode " + hexByte(op) + " at byte " + std::to_string(m_opOffset)
             + ": not a pickle, or a damaged one");
    } else if (op == 'S' || op == 'V' || op == 0x8f || op == 0x90 || op == 0x91) {
        // Data, but not of a kind a snapshot holds: protocol 0 quoted and
        // escaped text, sets.
        fail(std::string("pickle opcode ") + name + " at byte " + std::to_string(m_opOffset)
             + " is not supported: snapshots are written with protocol 2 or later and hold no sets");
    } else {
        fail(std::string("pickle opcode ") + name + " at byte " + std::to_string(m_opOffset)
             + " is refused: a snapshot is data and is never executed");
    }
    return false;
}

// ---------------------------------------------------------------- the machine

std::optional<Value> Unpickler::run()
{
    for (;;) {
        if (m_p == m_end && !fill(1)) {
            if (m_error.rfind("truncated", 0) == 0 || m_error.empty())
                m_error = "truncated pickle: the data ends at byte " + std::to_string(position())
                          + " before the STOP opcode";
            return std::nullopt;
        }
        m_opOffset = position();
        m_op = static_cast<std::uint8_t>(*m_p++);
        if (m_op == '.') {
            if (m_stack.empty() || (!m_marks.empty() && m_marks.back() == m_stack.size())) {
                malformed("the stack is empty at STOP");
                return std::nullopt;
            }
            return m_stack.back();
        }
        // The opcodes of every event (memo references to its keys and
        // action, small ints) take a fast path; anything unusual, a buffer
        // edge included, goes through execute().
        if (m_op == 'h' && m_p != m_end && m_stack.size() < m_limits.max_stack) {
            const auto index = static_cast<unsigned char>(*m_p);
            if (index < m_memo.size() && !m_memo[index].isContainer()) {
                ++m_p;
                m_stack.push_back(m_memo[index]);
                continue;
            }
        } else if (m_op == 'K' && m_p != m_end && m_stack.size() < m_limits.max_stack) {
            m_stack.push_back(Value::integer(static_cast<unsigned char>(*m_p++)));
            continue;
        }
        if (!execute(m_op)) {
            if (m_error.empty())
                malformed("failed");
            return std::nullopt;
        }
    }
}

// ---------------------------------------------------------------- the opcodes

// Every opcode of protocols 0 to 5 by pickletools' name (for messages), and
// what this reader does with it. Everything not given a handler imports,
// calls or needs a type this reader does not build (sets, out-of-band
// buffers, text-protocol STRING / UNICODE with their escapes): refused by
// name. STOP ends run() before any handler.
constinit const std::array<Unpickler::Opcode, 256> Unpickler::kOpcodes = [] {
    std::array<Opcode, 256> table{};
    for (Opcode &o : table)
        o = {nullptr, &Unpickler::refuse};
    const auto set = [&table](std::uint8_t op, const char *name, Handler run = &Unpickler::refuse) {
        table[op] = {name, run};
    };
    // protocol and framing: hints only
    set(0x80, "PROTO", &Unpickler::opProto);
    set(0x95, "FRAME", &Unpickler::opFrame);
    set('.', "STOP");
    // scalars
    set('N', "NONE", &Unpickler::opConstant);
    set(0x88, "NEWTRUE", &Unpickler::opConstant);
    set(0x89, "NEWFALSE", &Unpickler::opConstant);
    set('K', "BININT1", &Unpickler::opBinInt);
    set('M', "BININT2", &Unpickler::opBinInt);
    set('J', "BININT", &Unpickler::opBinInt);
    set(0x8a, "LONG1", &Unpickler::opLong);
    set(0x8b, "LONG4", &Unpickler::opLong);
    set('G', "BINFLOAT", &Unpickler::opBinFloat);
    set('I', "INT", &Unpickler::opTextInt);
    set('L', "LONG", &Unpickler::opTextInt);
    set('F', "FLOAT", &Unpickler::opTextFloat);
    // strings and bytes
    set('X', "BINUNICODE", &Unpickler::opString);
    set(0x8c, "SHORT_BINUNICODE", &Unpickler::opString);
    set(0x8d, "BINUNICODE8", &Unpickler::opString);
    set('T', "BINSTRING", &Unpickler::opString);
    set('U', "SHORT_BINSTRING", &Unpickler::opString);
    set('B', "BINBYTES", &Unpickler::opString);
    set('C', "SHORT_BINBYTES", &Unpickler::opString);
    set(0x8e, "BINBYTES8", &Unpickler::opString);
    set(0x96, "BYTEARRAY8", &Unpickler::opString);
    set('S', "STRING");
    set('V', "UNICODE");
    // containers
    set(']', "EMPTY_LIST", &Unpickler::opEmptyListOrDict);
    set('}', "EMPTY_DICT", &Unpickler::opEmptyListOrDict);
    set(')', "EMPTY_TUPLE", &Unpickler::opEmptyTuple);
    set(0x85, "TUPLE1", &Unpickler::opSmallTuple);
    set(0x86, "TUPLE2", &Unpickler::opSmallTuple);
    set(0x87, "TUPLE3", &Unpickler::opSmallTuple);
    set('t', "TUPLE", &Unpickler::opMarkedContainer);
    set('l', "LIST", &Unpickler::opMarkedContainer);
    set('d', "DICT", &Unpickler::opMarkedContainer);
    set('a', "APPEND", &Unpickler::opAppend);
    set('e', "APPENDS", &Unpickler::opAppends);
    set('s', "SETITEM", &Unpickler::opSetItem);
    set('u', "SETITEMS", &Unpickler::opSetItems);
    set(0x8f, "EMPTY_SET");
    set(0x90, "ADDITEMS");
    set(0x91, "FROZENSET");
    set(0x97, "NEXT_BUFFER");
    set(0x98, "READONLY_BUFFER");
    // stack manipulation
    set('(', "MARK", &Unpickler::opMark);
    set('0', "POP", &Unpickler::opPop);
    set('1', "POP_MARK", &Unpickler::opPopMark);
    set('2', "DUP", &Unpickler::opDup);
    // memo
    set(0x94, "MEMOIZE", &Unpickler::opMemoize);
    set('q', "BINPUT", &Unpickler::opBinPut);
    set('r', "LONG_BINPUT", &Unpickler::opBinPut);
    set('h', "BINGET", &Unpickler::opBinGet);
    set('j', "LONG_BINGET", &Unpickler::opBinGet);
    set('p', "PUT", &Unpickler::opTextMemo);
    set('g', "GET", &Unpickler::opTextMemo);
    // imports and calls: never executed
    set('c', "GLOBAL");
    set(0x93, "STACK_GLOBAL");
    set('R', "REDUCE");
    set('b', "BUILD");
    set('i', "INST");
    set('o', "OBJ");
    set(0x81, "NEWOBJ");
    set(0x92, "NEWOBJ_EX");
    set('P', "PERSID");
    set('Q', "BINPERSID");
    set(0x82, "EXT1");
    set(0x83, "EXT2");
    set(0x84, "EXT4");
    return table;
}();

bool Unpickler::execute(std::uint8_t op)
{
    return (this->*kOpcodes[op].run)(op);
}

// ---- protocol and framing: hints only

bool Unpickler::opProto(std::uint8_t)
{
    char b[1];
    if (!readExact(b, 1))
        return false;
    if (static_cast<unsigned char>(b[0]) > 5)
        return malformed("unsupported protocol " + std::to_string(static_cast<unsigned char>(b[0])));
    return true;
}

bool Unpickler::opFrame(std::uint8_t)
{
    char b[8];
    return readExact(b, 8);
}

// ---- scalars

// NONE, NEWTRUE, NEWFALSE.
bool Unpickler::opConstant(std::uint8_t op)
{
    return push(op == 'N' ? Value::none() : Value::boolean(op == 0x88));
}

// BININT1, BININT2 (unsigned), BININT (signed 32 bits).
bool Unpickler::opBinInt(std::uint8_t op)
{
    char b[4];
    if (op == 'K') {
        if (!readExact(b, 1))
            return false;
        return push(Value::integer(static_cast<unsigned char>(b[0])));
    }
    if (op == 'M') {
        if (!readExact(b, 2))
            return false;
        return push(Value::integer(static_cast<std::int64_t>(littleEndian(b, 2))));
    }
    if (!readExact(b, 4))
        return false;
    return push(Value::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(littleEndian(b, 4)))));
}

// LONG1, LONG4: little-endian two's complement of n bytes.
bool Unpickler::opLong(std::uint8_t op)
{
    char b[8];
    std::uint64_t n;
    if (op == 0x8a) {
        if (!readExact(b, 1))
            return false;
        n = static_cast<unsigned char>(b[0]);
    } else {
        if (!readExact(b, 4))
            return false;
        n = littleEndian(b, 4);
        if (n & 0x80000000u)
            return malformed("negative byte count");
    }
    if (n == 0)
        return push(Value::integer(0));
    if (n > 8) {
        // Wider than int64 unless the extra bytes only repeat the sign.
        if (n > 4096)
            return malformed("an integer of " + std::to_string(n) + " bytes is beyond 64 bits");
        if (!readString(n, m_scratch))
            return false;
        const bool negative = static_cast<unsigned char>(m_scratch[n - 1]) & 0x80;
        const char fillByte = negative ? '\xff' : '\0';
        for (std::size_t i = 8; i < n; ++i)
            if (m_scratch[i] != fillByte)
                return malformed("an integer beyond 64 bits is refused: no snapshot field needs one");
        if (((static_cast<unsigned char>(m_scratch[7]) & 0x80) != 0) != negative)
            return malformed("an integer beyond 64 bits is refused: no snapshot field needs one");
        return push(Value::integer(static_cast<std::int64_t>(littleEndian(m_scratch.data(), 8))));
    }
    if (!readExact(b, static_cast<std::size_t>(n)))
        return false;
    std::uint64_t u = littleEndian(b, static_cast<int>(n));
    if (n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80))
        u |= ~std::uint64_t{0} << (8 * n); // sign-extend
    return push(Value::integer(static_cast<std::int64_t>(u)));
}

bool Unpickler::opBinFloat(std::uint8_t)
{
    char b[8];
    if (!readExact(b, 8))
        return false;
    std::uint64_t bits = 0;
    for (const char byte : b) // big-endian IEEE 754
        bits = (bits << 8) | static_cast<unsigned char>(byte);
    double d;
    std::memcpy(&d, &bits, 8);
    return push(Value::real(d));
}

// INT: decimal text; "01" / "00" are True / False (protocol 0). LONG: decimal text with a trailing L.
bool Unpickler::opTextInt(std::uint8_t op)
{
    if (!readLine(m_scratch))
        return false;
    std::string_view t = m_scratch;
    if (op == 'I' && t == "01")
        return push(Value::boolean(true));
    if (op == 'I' && t == "00")
        return push(Value::boolean(false));
    if (op == 'L' && !t.empty() && t.back() == 'L')
        t.remove_suffix(1);
    std::int64_t n = 0;
    const char *first = t.data() + (!t.empty() && t.front() == '+' ? 1 : 0);
    const auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), n);
    if (ec != std::errc() || ptr != t.data() + t.size() || first == t.data() + t.size())
        return malformed("\"" + std::string(t.substr(0, 40)) + "\" is not an integer within 64 bits");
    return push(Value::integer(n));
}

bool Unpickler::opTextFloat(std::uint8_t)
{
    if (!readLine(m_scratch))
        return false;
    // std::from_chars for double: locale-free, as Python's float().
    double d = 0;
    const char *first = m_scratch.data();
    const auto [ptr, ec] = std::from_chars(first, first + m_scratch.size(), d);
    if (ec != std::errc() || ptr != first + m_scratch.size())
        return malformed("\"" + m_scratch.substr(0, 40) + "\" is not a float");
    return push(Value::real(d));
}

// ---- strings and bytes

// BINUNICODE, SHORT_BINUNICODE, BINUNICODE8; BINSTRING, SHORT_BINSTRING
// (Python 2 str: read as text, as Python 3's default ASCII decoding);
// BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8.
bool Unpickler::opString(std::uint8_t op)
{
    char b[8];
    const int width = (op == 0x8c || op == 'U' || op == 'C') ? 1 : (op == 0x8d || op == 0x8e || op == 0x96) ? 8 : 4;
    if (!readExact(b, static_cast<std::size_t>(width)))
        return false;
    std::uint64_t n = littleEndian(b, width);
    if (op == 'T' && (n & 0x80000000u))
        return malformed("negative string length");
    const Kind kind = (op == 'B' || op == 'C' || op == 0x8e || op == 0x96) ? Kind::Bytes : Kind::Str;
    if (n <= static_cast<std::uint64_t>(m_end - m_p)) { // the common case: no copy
        const Value v = internString(std::string_view(m_p, static_cast<std::size_t>(n)), kind);
        m_p += n;
        return push(v);
    }
    if (!readString(n, m_scratch))
        return false;
    return push(internString(m_scratch, kind));
}

// ---- containers

bool Unpickler::opEmptyListOrDict(std::uint8_t op)
{
    const Value v = newContainer(op == ']' ? Kind::List : Kind::Dict);
    created(v, m_stack.size());
    return push(v);
}

bool Unpickler::opEmptyTuple(std::uint8_t)
{
    return push(newContainer(Kind::Tuple));
}

// TUPLE1, TUPLE2, TUPLE3: the top 1 to 3 values.
bool Unpickler::opSmallTuple(std::uint8_t op)
{
    const std::size_t n = op - 0x84u;
    const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (m_stack.size() < floor + n)
        return malformed("fewer than " + std::to_string(n) + " values on the stack");
    const Value t = newContainer(Kind::Tuple);
    Object &o = m_objects[t.id];
    o.items.assign(m_stack.end() - static_cast<std::ptrdiff_t>(n), m_stack.end());
    m_liveValues += n;
    m_stack.resize(m_stack.size() - n);
    return push(t);
}

// TUPLE, LIST, DICT: the values above the innermost MARK.
bool Unpickler::opMarkedContainer(std::uint8_t op)
{
    std::size_t m = 0; // set by popMark when it succeeds
    if (!popMark(m))
        return false;
    const std::size_t n = m_stack.size() - m;
    const Kind kind = op == 't' ? Kind::Tuple : op == 'l' ? Kind::List : Kind::Dict;
    if (kind == Kind::Dict && n % 2 != 0)
        return malformed("an odd number of values for a dict");
    const Value v = newContainer(kind);
    if (kind == Kind::Tuple) {
        Object &o = m_objects[v.id];
        o.items.assign(m_stack.begin() + static_cast<std::ptrdiff_t>(m), m_stack.end());
        m_liveValues += n;
        m_stack.resize(m);
        return push(v);
    }
    // Built from items already there: where it goes is where the mark was.
    std::vector<Value> items(m_stack.begin() + static_cast<std::ptrdiff_t>(m), m_stack.end());
    m_stack.resize(m);
    created(v, m);
    if (!push(v))
        return false;
    for (std::size_t i = 0; i < items.size(); i += kind == Kind::Dict ? 2 : 1) {
        if (kind == Kind::Dict) {
            if (items[i].kind == Kind::List || items[i].kind == Kind::Dict)
                return malformed("a list or dict as a dict key");
            if (!addItem(v, items[i], items[i + 1]))
                return false;
        } else if (!addItem(v, {}, items[i])) {
            return false;
        }
    }
    return true;
}

bool Unpickler::opAppend(std::uint8_t)
{
    const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (m_stack.size() < floor + 2)
        return malformed("APPEND needs a list and a value");
    const Value item = m_stack.back();
    m_stack.pop_back();
    if (kind(m_stack.back()) != Kind::List)
        return malformed("APPEND to a " + std::string(kindName(kind(m_stack.back()))));
    return addItem(m_stack.back(), {}, item);
}

bool Unpickler::opAppends(std::uint8_t)
{
    std::size_t m = 0; // set by popMark when it succeeds
    if (!popMark(m))
        return false;
    if (m == 0 || kind(m_stack[m - 1]) != Kind::List)
        return malformed("APPENDS to something that is not a list");
    return addItems(m - 1, m, false);
}

bool Unpickler::opSetItem(std::uint8_t)
{
    const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (m_stack.size() < floor + 3)
        return malformed("SETITEM needs a dict, a key and a value");
    const Value value = m_stack.back();
    const Value key = m_stack[m_stack.size() - 2];
    m_stack.resize(m_stack.size() - 2);
    if (kind(m_stack.back()) != Kind::Dict)
        return malformed("SETITEM on a " + std::string(kindName(kind(m_stack.back()))));
    if (key.kind == Kind::List || key.kind == Kind::Dict)
        return malformed("a list or dict as a dict key");
    return addItem(m_stack.back(), key, value);
}

bool Unpickler::opSetItems(std::uint8_t)
{
    std::size_t m = 0; // set by popMark when it succeeds
    if (!popMark(m))
        return false;
    if (m == 0 || kind(m_stack[m - 1]) != Kind::Dict)
        return malformed("SETITEMS on something that is not a dict");
    if ((m_stack.size() - m) % 2 != 0)
        return malformed("an odd number of values for SETITEMS");
    return addItems(m - 1, m, true);
}

// ---- stack manipulation

bool Unpickler::opMark(std::uint8_t)
{
    if (m_marks.size() >= m_limits.max_nesting)
        return malformed("more than " + std::to_string(m_limits.max_nesting) + " nested MARKs");
    m_marks.push_back(m_stack.size());
    return true;
}

// The top value, or the mark when nothing is above it (as pickle.py).
bool Unpickler::opPop(std::uint8_t)
{
    if (!m_marks.empty() && m_marks.back() == m_stack.size()) {
        m_marks.pop_back();
        return true;
    }
    if (m_stack.empty())
        return malformed("POP from an empty stack");
    m_stack.pop_back();
    return true;
}

bool Unpickler::opPopMark(std::uint8_t)
{
    std::size_t m = 0; // set by popMark when it succeeds
    if (!popMark(m))
        return false;
    m_stack.resize(m);
    return true;
}

bool Unpickler::opDup(std::uint8_t)
{
    if (m_stack.empty() || (!m_marks.empty() && m_marks.back() == m_stack.size()))
        return malformed("DUP of nothing");
    return push(m_stack.back());
}

// ---- memo

// The next index, as pickle.py's len(memo).
bool Unpickler::opMemoize(std::uint8_t)
{
    return memoPut(m_memo.size() + m_sparseMemo.size());
}

// BINPUT: a 1-byte index, LONG_BINPUT: 4 bytes.
bool Unpickler::opBinPut(std::uint8_t op)
{
    char b[4];
    if (op == 'q') {
        if (!readExact(b, 1))
            return false;
        return memoPut(static_cast<unsigned char>(b[0]));
    }
    if (!readExact(b, 4))
        return false;
    return memoPut(littleEndian(b, 4));
}

// BINGET: a 1-byte index, LONG_BINGET: 4 bytes.
bool Unpickler::opBinGet(std::uint8_t op)
{
    char b[4];
    if (op == 'h') {
        if (!readExact(b, 1))
            return false;
        return memoGet(static_cast<unsigned char>(b[0]));
    }
    if (!readExact(b, 4))
        return false;
    return memoGet(littleEndian(b, 4));
}

// PUT, GET: a decimal index on a line.
bool Unpickler::opTextMemo(std::uint8_t op)
{
    if (!readLine(m_scratch))
        return false;
    std::uint64_t index = 0;
    const auto [ptr, ec] = std::from_chars(m_scratch.data(), m_scratch.data() + m_scratch.size(), index);
    if (ec != std::errc() || ptr != m_scratch.data() + m_scratch.size() || m_scratch.empty())
        return malformed("\"" + m_scratch.substr(0, 40) + "\" is not a memo index");
    return op == 'p' ? memoPut(index) : memoGet(index);
}

} // namespace memledger::pickle
