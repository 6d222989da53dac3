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

// Every opcode of protocols 0 to 5, for messages (pickletools' names).
const char *opcodeName(std::uint8_t op)
{
    switch (op) {
    case '(':
        return "MARK";
    case '.':
        return "STOP";
    case '0':
        return "POP";
    case '1':
        return "POP_MARK";
    case '2':
        return "DUP";
    case 'F':
        return "FLOAT";
    case 'I':
        return "INT";
    case 'J':
        return "BININT";
    case 'K':
        return "BININT1";
    case 'L':
        return "LONG";
    case 'M':
        return "BININT2";
    case 'N':
        return "NONE";
    case 'P':
        return "PERSID";
    case 'Q':
        return "BINPERSID";
    case 'R':
        return "REDUCE";
    case 'S':
        return "STRING";
    case 'T':
        return "BINSTRING";
    case 'U':
        return "SHORT_BINSTRING";
    case 'V':
        return "UNICODE";
    case 'X':
        return "BINUNICODE";
    case 'a':
        return "APPEND";
    case 'b':
        return "BUILD";
    case 'c':
        return "GLOBAL";
    case 'd':
        return "DICT";
    case '}':
        return "EMPTY_DICT";
    case 'e':
        return "APPENDS";
    case 'g':
        return "GET";
    case 'h':
        return "BINGET";
    case 'i':
        return "INST";
    case 'j':
        return "LONG_BINGET";
    case 'l':
        return "LIST";
    case ']':
        return "EMPTY_LIST";
    case 'o':
        return "OBJ";
    case 'p':
        return "PUT";
    case 'q':
        return "BINPUT";
    case 'r':
        return "LONG_BINPUT";
    case 's':
        return "SETITEM";
    case 't':
        return "TUPLE";
    case ')':
        return "EMPTY_TUPLE";
    case 'u':
        return "SETITEMS";
    case 'G':
        return "BINFLOAT";
    case 0x80:
        return "PROTO";
    case 0x81:
        return "NEWOBJ";
    case 0x82:
        return "EXT1";
    case 0x83:
        return "EXT2";
    case 0x84:
        return "EXT4";
    case 0x85:
        return "TUPLE1";
    case 0x86:
        return "TUPLE2";
    case 0x87:
        return "TUPLE3";
    case 0x88:
        return "NEWTRUE";
    case 0x89:
        return "NEWFALSE";
    case 0x8a:
        return "LONG1";
    case 0x8b:
        return "LONG4";
    case 'B':
        return "BINBYTES";
    case 'C':
        return "SHORT_BINBYTES";
    case 0x8c:
        return "SHORT_BINUNICODE";
    case 0x8d:
        return "BINUNICODE8";
    case 0x8e:
        return "BINBYTES8";
    case 0x8f:
        return "EMPTY_SET";
    case 0x90:
        return "ADDITEMS";
    case 0x91:
        return "FROZENSET";
    case 0x92:
        return "NEWOBJ_EX";
    case 0x93:
        return "STACK_GLOBAL";
    case 0x94:
        return "MEMOIZE";
    case 0x95:
        return "FRAME";
    case 0x96:
        return "BYTEARRAY8";
    case 0x97:
        return "NEXT_BUFFER";
    case 0x98:
        return "READONLY_BUFFER";
    default:
        return nullptr;
    }
}

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

bool Unpickler::execute(std::uint8_t op)
{
    char b[8];
    switch (op) {
    // ---- protocol and framing: hints only
    case 0x80: // PROTO
        if (!readExact(b, 1))
            return false;
        if (static_cast<unsigned char>(b[0]) > 5)
            return malformed("unsupported protocol " + std::to_string(static_cast<unsigned char>(b[0])));
        return true;
    case 0x95: // FRAME
        return readExact(b, 8);

    // ---- scalars
    case 'N':
        return push(Value::none());
    case 0x88:
        return push(Value::boolean(true));
    case 0x89:
        return push(Value::boolean(false));
    case 'K':
        if (!readExact(b, 1))
            return false;
        return push(Value::integer(static_cast<unsigned char>(b[0])));
    case 'M':
        if (!readExact(b, 2))
            return false;
        return push(Value::integer(static_cast<std::int64_t>(littleEndian(b, 2))));
    case 'J':
        if (!readExact(b, 4))
            return false;
        return push(Value::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(littleEndian(b, 4)))));
    case 0x8a: // LONG1
    case 0x8b: { // LONG4: little-endian two's complement of n bytes
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
    case 'G': {
        if (!readExact(b, 8))
            return false;
        std::uint64_t bits = 0;
        for (const char byte : b) // big-endian IEEE 754
            bits = (bits << 8) | static_cast<unsigned char>(byte);
        double d;
        std::memcpy(&d, &bits, 8);
        return push(Value::real(d));
    }
    case 'I': // INT: decimal text; "01" / "00" are True / False (protocol 0)
    case 'L': { // LONG: decimal text with a trailing L
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
    case 'F': {
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
    case 'X': // BINUNICODE
    case 0x8c: // SHORT_BINUNICODE
    case 0x8d: // BINUNICODE8
    case 'T': // BINSTRING (Python 2 str: read as text, as Python 3's default ASCII decoding)
    case 'U': // SHORT_BINSTRING
    case 'B': // BINBYTES
    case 'C': // SHORT_BINBYTES
    case 0x8e: // BINBYTES8
    case 0x96: { // BYTEARRAY8
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
    case ']':
    case '}': {
        const Value v = newContainer(op == ']' ? Kind::List : Kind::Dict);
        created(v, m_stack.size());
        return push(v);
    }
    case ')':
        return push(newContainer(Kind::Tuple));
    case 0x85:
    case 0x86:
    case 0x87: {
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
    case 't': // TUPLE
    case 'l': // LIST
    case 'd': { // DICT
        std::size_t m;
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
    case 'a': { // APPEND
        const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
        if (m_stack.size() < floor + 2)
            return malformed("APPEND needs a list and a value");
        const Value item = m_stack.back();
        m_stack.pop_back();
        if (kind(m_stack.back()) != Kind::List)
            return malformed("APPEND to a " + std::string(kindName(kind(m_stack.back()))));
        return addItem(m_stack.back(), {}, item);
    }
    case 'e': { // APPENDS
        std::size_t m;
        if (!popMark(m))
            return false;
        if (m == 0 || kind(m_stack[m - 1]) != Kind::List)
            return malformed("APPENDS to something that is not a list");
        return addItems(m - 1, m, false);
    }
    case 's': { // SETITEM
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
    case 'u': { // SETITEMS
        std::size_t m;
        if (!popMark(m))
            return false;
        if (m == 0 || kind(m_stack[m - 1]) != Kind::Dict)
            return malformed("SETITEMS on something that is not a dict");
        if ((m_stack.size() - m) % 2 != 0)
            return malformed("an odd number of values for SETITEMS");
        return addItems(m - 1, m, true);
    }

    // ---- stack manipulation
    case '(':
        if (m_marks.size() >= m_limits.max_nesting)
            return malformed("more than " + std::to_string(m_limits.max_nesting) + " nested MARKs");
        m_marks.push_back(m_stack.size());
        return true;
    case '0': // POP: the top value, or the mark when nothing is above it (as pickle.py)
        if (!m_marks.empty() && m_marks.back() == m_stack.size()) {
            m_marks.pop_back();
            return true;
        }
        if (m_stack.empty())
            return malformed("POP from an empty stack");
        m_stack.pop_back();
        return true;
    case '1': { // POP_MARK
        std::size_t m;
        if (!popMark(m))
            return false;
        m_stack.resize(m);
        return true;
    }
    case '2': // DUP
        if (m_stack.empty() || (!m_marks.empty() && m_marks.back() == m_stack.size()))
            return malformed("DUP of nothing");
        return push(m_stack.back());

    // ---- memo
    case 0x94:
        return memoPut(m_memo.size() + m_sparseMemo.size()); // MEMOIZE: the next index, as pickle.py's len(memo)
    case 'q':
        if (!readExact(b, 1))
            return false;
        return memoPut(static_cast<unsigned char>(b[0]));
    case 'r':
        if (!readExact(b, 4))
            return false;
        return memoPut(littleEndian(b, 4));
    case 'h':
        if (!readExact(b, 1))
            return false;
        return memoGet(static_cast<unsigned char>(b[0]));
    case 'j':
        if (!readExact(b, 4))
            return false;
        return memoGet(littleEndian(b, 4));
    case 'p': // PUT
    case 'g': { // GET: decimal index on a line
        if (!readLine(m_scratch))
            return false;
        std::uint64_t index = 0;
        const auto [ptr, ec] = std::from_chars(m_scratch.data(), m_scratch.data() + m_scratch.size(), index);
        if (ec != std::errc() || ptr != m_scratch.data() + m_scratch.size() || m_scratch.empty())
            return malformed("\"" + m_scratch.substr(0, 40) + "\" is not a memo index");
        return op == 'p' ? memoPut(index) : memoGet(index);
    }

    default:
        // Everything else imports, calls or needs a type this reader does
        // not build (sets, out-of-band buffers, text-protocol STRING /
        // UNICODE with their escapes): refused by name.
        return refuse(op);
    }
}

} // namespace memledger::pickle
