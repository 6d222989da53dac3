// SPDX-License-Identifier: MIT
#include "core/formats/shellwords.h"

#include <cctype>
#include <charconv>
#include <climits>
#include <optional>

namespace memledger {

namespace {

// ---------------------------------------------------------------- tokens

enum class Tok { Word, Sep, Newline, AndIf, OrIf, Pipe, Redirect, ArrayOpen, ArrayClose };

struct Token
{
    Tok kind;
    std::string text; // a word as written, quotes and all; ArrayOpen: "NAME=" or "NAME+="
    int line;
};

bool isNameStart(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isNameChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// "NAME=" or "NAME+=": the whole of a word that opens an array assignment.
bool isArrayOpener(const std::string &w)
{
    if (w.size() < 2 || w.back() != '=' || !isNameStart(w[0]))
        return false;
    std::size_t end = w.size() - 1;
    if (w[end - 1] == '+')
        --end;
    for (std::size_t i = 1; i < end; ++i)
        if (!isNameChar(w[i]))
            return false;
    return end >= 1;
}

class Lexer
{
public:
    Lexer(std::string_view text, ShellScript &out)
        : m_s(text)
        , m_out(out)
    { }

    std::vector<Token> run()
    {
        while (m_i < m_s.size())
            step();
        endWord();
        return std::move(m_tokens);
    }

private:
    void step()
    {
        const char c = m_s[m_i];
        if (c == '\\' && m_i + 1 < m_s.size() && m_s[m_i + 1] == '\n') { // line continuation
            m_i += 2;
            ++m_line;
            return;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            endWord();
            ++m_i;
            return;
        }
        if (c == '\n') {
            endWord();
            push(Tok::Newline, "\n");
            ++m_line;
            ++m_i;
            return;
        }
        if (c == '#' && m_word.empty()) {
            comment();
            return;
        }
        if (c == '(' && m_arrayDepth == 0 && isArrayOpener(m_word)) {
            push(Tok::ArrayOpen, m_word);
            m_word.clear();
            m_wordLine = 0;
            ++m_arrayDepth;
            ++m_i;
            return;
        }
        if (c == ')' && m_arrayDepth > 0) {
            endWord();
            push(Tok::ArrayClose, ")");
            --m_arrayDepth;
            ++m_i;
            return;
        }
        if (c == '(' && m_i + 1 < m_s.size() && m_s[m_i + 1] == ')' && !m_word.empty()) { // name() {
            m_word += "()";
            m_i += 2;
            endWord();
            return;
        }
        if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>') {
            op();
            return;
        }
        wordChar();
    }

    void wordChar()
    {
        if (m_word.empty())
            m_wordLine = m_line;
        const char c = m_s[m_i];
        if (c == '\\') {
            copy(std::min(m_s.size(), m_i + 2));
        } else if (c == '\'') {
            const std::size_t close = m_s.find('\'', m_i + 1);
            copy(close == std::string_view::npos ? m_s.size() : close + 1);
        } else if (c == '"') {
            copy(skipDouble(m_i));
        } else if (c == '$' && m_i + 1 < m_s.size() && (m_s[m_i + 1] == '(' || m_s[m_i + 1] == '{')) {
            copy(skipGroup(m_i + 1));
        } else if (c == '`') {
            const std::size_t close = m_s.find('`', m_i + 1);
            copy(close == std::string_view::npos ? m_s.size() : close + 1);
        } else {
            copy(m_i + 1);
        }
    }

    // The end of a "..." starting at `from`, past its closing quote.
    std::size_t skipDouble(std::size_t from) const
    {
        std::size_t i = from + 1;
        while (i < m_s.size() && m_s[i] != '"') {
            if (m_s[i] == '\\')
                i += 2;
            else if (m_s[i] == '$' && i + 1 < m_s.size() && (m_s[i + 1] == '(' || m_s[i + 1] == '{'))
                i = skipGroup(i + 1);
            else
                ++i;
        }
        return std::min(m_s.size(), i + 1);
    }

    // The end of a (...) or {...} group starting at `from`, nested and quoted groups inside.
    std::size_t skipGroup(std::size_t from) const
    {
        const char open = m_s[from], close = open == '(' ? ')' : '}';
        int depth = 0;
        std::size_t i = from;
        while (i < m_s.size()) {
            const char c = m_s[i];
            if (c == '\\') {
                i += 2;
                continue;
            }
            if (c == '\'') {
                const std::size_t q = m_s.find('\'', i + 1);
                i = q == std::string_view::npos ? m_s.size() : q + 1;
                continue;
            }
            if (c == '"') {
                i = skipDouble(i);
                continue;
            }
            if (c == open)
                ++depth;
            else if (c == close && --depth == 0)
                return i + 1;
            ++i;
        }
        return m_s.size();
    }

    void copy(std::size_t to)
    {
        for (std::size_t k = m_i; k < to; ++k)
            if (m_s[k] == '\n')
                ++m_line;
        m_word.append(m_s.substr(m_i, to - m_i));
        m_i = to;
    }

    void comment()
    {
        const std::size_t end = std::min(m_s.find('\n', m_i), m_s.size());
        std::string_view text = m_s.substr(m_i + 1, end - m_i - 1);
        while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
            text.remove_prefix(1);
        constexpr std::string_view kTag = "memledger:";
        if (text.substr(0, kTag.size()) == kTag) {
            text.remove_prefix(kTag.size());
            while (!text.empty() && (text.front() == ' ' || text.back() == ' ' || text.back() == '\r'))
                text = text.front() == ' ' ? text.substr(1) : text.substr(0, text.size() - 1);
            m_out.annotations.push_back({std::string(text), m_line});
        }
        m_i = end;
    }

    void op()
    {
        const char c = m_s[m_i];
        const char n = m_i + 1 < m_s.size() ? m_s[m_i + 1] : '\0';
        if (c == '<' || c == '>') {
            // A redirection: "2>" names a descriptor, not a word.
            bool digits = !m_word.empty();
            for (char d : m_word)
                digits = digits && std::isdigit(static_cast<unsigned char>(d));
            if (digits)
                m_word.clear();
            endWord();
            std::size_t len = 1;
            while (m_i + len < m_s.size() && (m_s[m_i + len] == '>' || m_s[m_i + len] == '<' || m_s[m_i + len] == '&'))
                ++len;
            push(Tok::Redirect, std::string(m_s.substr(m_i, len)));
            m_i += len;
            return;
        }
        endWord();
        if (c == '&' && n == '&') {
            push(Tok::AndIf, "&&");
            m_i += 2;
        } else if (c == '|' && n == '|') {
            push(Tok::OrIf, "||");
            m_i += 2;
        } else if (c == '|') {
            push(Tok::Pipe, "|");
            m_i += n == '&' ? 2 : 1;
        } else if (c == '&' && n == '>') {
            push(Tok::Redirect, "&>");
            m_i += 2;
        } else {
            push(Tok::Sep, std::string(1, c));
            m_i += c == ';' && n == ';' ? 2 : 1;
        }
    }

    void endWord()
    {
        if (m_word.empty())
            return;
        m_tokens.push_back({Tok::Word, std::move(m_word), m_wordLine ? m_wordLine : m_line});
        m_word.clear();
        m_wordLine = 0;
    }

    void push(Tok kind, std::string text) { m_tokens.push_back({kind, std::move(text), m_line}); }

    std::string_view m_s;
    ShellScript &m_out;
    std::size_t m_i = 0;
    int m_line = 1;
    int m_wordLine = 0;
    int m_arrayDepth = 0;
    std::string m_word;
    std::vector<Token> m_tokens;
};

// ---------------------------------------------------------------- expansion

struct Expansion
{
    std::vector<std::string> fields;
    std::vector<std::string> unset;
    bool opaque = false; // a command substitution or a form this reader does not evaluate
};

using Variables = std::map<std::string, std::vector<std::string>>;

// Integer arithmetic of $(( )): + - * / % and parentheses over integers and
// variable names (an unset name is 0, as in bash). What bash refuses gives no
// value: a result past 64 bits, a division by zero, and nesting (parentheses,
// minus signs, a variable naming another) deeper than kMaxDepth, where bash
// says "expression recursion level exceeded" (a variable naming itself).
class Arithmetic
{
public:
    Arithmetic(std::string_view s, const Variables &vars, int depth = 0)
        : m_s(s)
        , m_vars(vars)
        , m_depth(depth)
    { }

    std::optional<long long> run()
    {
        const std::optional<long long> v = sum();
        skip();
        return m_i == m_s.size() ? v : std::nullopt;
    }

private:
    void skip()
    {
        while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i])))
            ++m_i;
    }
    bool eat(char c)
    {
        skip();
        if (m_i < m_s.size() && m_s[m_i] == c) {
            ++m_i;
            return true;
        }
        return false;
    }
    static constexpr int kMaxDepth = 64;

    std::optional<long long> sum()
    {
        std::optional<long long> v = product();
        while (v) {
            long long out = 0;
            if (eat('+')) {
                const auto r = product();
                v = r && !__builtin_add_overflow(*v, *r, &out) ? std::optional<long long>(out) : std::nullopt;
            } else if (eat('-')) {
                const auto r = product();
                v = r && !__builtin_sub_overflow(*v, *r, &out) ? std::optional<long long>(out) : std::nullopt;
            } else {
                break;
            }
        }
        return v;
    }
    std::optional<long long> product()
    {
        std::optional<long long> v = unary();
        while (v) {
            skip();
            const char c = m_i < m_s.size() ? m_s[m_i] : '\0';
            if (c != '*' && c != '/' && c != '%')
                break;
            ++m_i;
            const auto r = unary();
            if (!r || ((c == '/' || c == '%') && (*r == 0 || (*r == -1 && *v == LLONG_MIN))))
                return std::nullopt;
            long long out = 0;
            if (c == '*' && __builtin_mul_overflow(*v, *r, &out))
                return std::nullopt;
            v = c == '*' ? out : c == '/' ? *v / *r : *v % *r;
        }
        return v;
    }
    std::optional<long long> unary()
    {
        if (++m_depth > kMaxDepth)
            return std::nullopt;
        const std::optional<long long> v = operand();
        --m_depth;
        return v;
    }
    std::optional<long long> operand()
    {
        if (eat('-')) {
            const auto v = unary();
            return v && *v != LLONG_MIN ? std::optional<long long>(-*v) : std::nullopt;
        }
        if (eat('(')) {
            const auto v = sum();
            return eat(')') ? v : std::nullopt;
        }
        skip();
        const std::size_t start = m_i;
        while (m_i < m_s.size() && isNameChar(m_s[m_i]))
            ++m_i;
        const std::string token(m_s.substr(start, m_i - start));
        if (token.empty())
            return std::nullopt;
        if (std::isdigit(static_cast<unsigned char>(token[0]))) {
            long long n = 0;
            const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), n);
            if (ec != std::errc() || end != token.data() + token.size())
                return std::nullopt; // not a number, or past 64 bits
            return n;
        }
        const auto it = m_vars.find(token);
        if (it == m_vars.end() || it->second.empty() || it->second[0].empty())
            return 0;
        return Arithmetic(it->second[0], m_vars, m_depth).run();
    }

    std::string_view m_s;
    const Variables &m_vars;
    int m_depth;
    std::size_t m_i = 0;
};

// Expands one word as bash would: quote removal, parameters, arithmetic,
// and (when `split`) word splitting of unquoted results on blanks.
class Expander
{
public:
    Expander(const Variables &vars, bool split)
        : m_vars(vars)
        , m_split(split)
    { }

    Expansion run(std::string_view raw)
    {
        std::size_t i = 0;
        while (i < raw.size()) {
            const char c = raw[i];
            if (c == '\'') {
                const std::size_t close = std::min(raw.find('\'', i + 1), raw.size());
                literal(raw.substr(i + 1, close - i - 1));
                i = close + 1;
            } else if (c == '"') {
                i = doubleQuoted(raw, i + 1);
            } else if (c == '\\') {
                if (i + 1 < raw.size())
                    literal(raw.substr(i + 1, 1));
                i += 2;
            } else if (c == '$') {
                i = dollar(raw, i, false);
            } else if (c == '`') {
                const std::size_t close = std::min(raw.find('`', i + 1), raw.size());
                opaque(raw.substr(i, close + 1 - i), false);
                i = close + 1;
            } else {
                literal(raw.substr(i, 1));
                ++i;
            }
        }
        if (m_started || !m_split)
            m_result.fields.push_back(m_current);
        return std::move(m_result);
    }

private:
    std::size_t doubleQuoted(std::string_view raw, std::size_t i)
    {
        m_started = true;
        while (i < raw.size() && raw[i] != '"') {
            if (raw[i] == '\\' && i + 1 < raw.size()) {
                // Bash keeps a backslash's meaning before $, `, ", \ and a
                // newline; before a newline both go (a line continuation:
                // GPT_ARGS="--num-layers 70 \ ..." across lines, BLOOM's launch).
                const char n = raw[i + 1];
                if (n != '\n')
                    literal(n == '$' || n == '`' || n == '"' || n == '\\' ? raw.substr(i + 1, 1) : raw.substr(i, 2));
                i += 2;
            } else if (raw[i] == '$') {
                i = dollar(raw, i, true);
            } else {
                literal(raw.substr(i, 1));
                ++i;
            }
        }
        return i + 1;
    }

    static std::size_t matching(std::string_view raw, std::size_t open)
    {
        const char o = raw[open], c = o == '(' ? ')' : '}';
        int depth = 0;
        for (std::size_t i = open; i < raw.size(); ++i) {
            if (raw[i] == o)
                ++depth;
            else if (raw[i] == c && --depth == 0)
                return i;
        }
        return raw.size();
    }

    // One $-expansion at raw[i]; returns the index after it.
    std::size_t dollar(std::string_view raw, std::size_t i, bool quoted)
    {
        const char n = i + 1 < raw.size() ? raw[i + 1] : '\0';
        if (n == '(' && i + 2 < raw.size() && raw[i + 2] == '(') {
            const std::size_t close = matching(raw, i + 1);
            const std::string_view inner = raw.substr(i + 3, std::max<std::size_t>(close, i + 4) - i - 4);
            Expansion e = Expander(m_vars, false).run(inner);
            const std::optional<long long> v = e.opaque ? std::nullopt : Arithmetic(e.fields[0], m_vars).run();
            if (v)
                value({std::to_string(*v)}, quoted, false);
            else
                opaque(raw.substr(i, close + 1 - i), quoted);
            return close + 1;
        }
        if (n == '(') {
            const std::size_t close = matching(raw, i + 1);
            opaque(raw.substr(i, close + 1 - i), quoted);
            return close + 1;
        }
        if (n == '{') {
            const std::size_t close = matching(raw, i + 1);
            braced(raw.substr(i + 2, close - i - 2), raw.substr(i, close + 1 - i), quoted);
            return close + 1;
        }
        if (isNameStart(n)) {
            std::size_t end = i + 1;
            while (end < raw.size() && isNameChar(raw[end]))
                ++end;
            parameter(std::string(raw.substr(i + 1, end - i - 1)), "", quoted);
            return end;
        }
        if (std::isdigit(static_cast<unsigned char>(n)) || n == '@' || n == '*' || n == '#' || n == '?' || n == '$'
            || n == '!' || n == '-') {
            parameter(std::string(1, n), "", quoted);
            return i + 2;
        }
        literal("$");
        return i + 1;
    }

    // ${...}: NAME, NAME[@], #NAME, and the :- - := = :+ + :? ? operators.
    void braced(std::string_view inner, std::string_view whole, bool quoted)
    {
        const bool length = !inner.empty() && inner[0] == '#' && inner.size() > 1;
        if (length)
            inner.remove_prefix(1);
        std::size_t k = 0;
        if (k < inner.size()
            && (std::isdigit(static_cast<unsigned char>(inner[k])) || inner[k] == '@' || inner[k] == '*'
                || inner[k] == '#' || inner[k] == '?'))
            ++k;
        else
            while (k < inner.size() && isNameChar(inner[k]))
                ++k;
        std::string name(inner.substr(0, k));
        std::string index;
        if (k < inner.size() && inner[k] == '[') {
            const std::size_t close = inner.find(']', k);
            if (close == std::string_view::npos)
                return opaque(whole, quoted);
            index = std::string(inner.substr(k + 1, close - k - 1));
            k = close + 1;
        }
        const std::string_view rest = inner.substr(k);
        if (name.empty() || (length && !rest.empty()))
            return opaque(whole, quoted);
        if (length) {
            const std::vector<std::string> *v = lookup(name);
            const std::size_t n = !v                               ? 0
                                  : (index == "@" || index == "*") ? v->size()
                                                                   : (v->empty() ? 0 : v->front().size());
            return value({std::to_string(n)}, quoted, false);
        }
        static constexpr std::string_view kOps[] = {":-", ":=", ":+", ":?", "-", "=", "+", "?"};
        for (std::string_view op : kOps) {
            if (rest.substr(0, op.size()) == op)
                return parameterOp(name, index, op, rest.substr(op.size()), quoted);
        }
        if (!rest.empty())
            return opaque(whole, quoted); // ${X%suffix}, ${X/a/b}, ${X:0:3}: not followed
        parameter(name, index, quoted);
    }

    void parameterOp(const std::string &name, const std::string &index, std::string_view op, std::string_view word,
                     bool quoted)
    {
        const std::vector<std::string> *v = lookup(name);
        const bool set = v != nullptr;
        const bool nonEmpty = set && !v->empty() && !(v->size() == 1 && (*v)[0].empty());
        const bool colon = op[0] == ':';
        const bool useValue = colon ? nonEmpty : set;
        const char kind = op.back();
        if (kind == '+') {
            if (useValue)
                value(Expander(m_vars, false).run(word).fields, quoted, false);
            return;
        }
        if (useValue || kind == '?')
            return parameter(name, index, quoted);
        Expansion e = Expander(m_vars, false).run(word);
        m_result.opaque = m_result.opaque || e.opaque;
        m_result.unset.insert(m_result.unset.end(), e.unset.begin(), e.unset.end());
        value(e.fields, quoted, false);
    }

    const std::vector<std::string> *lookup(const std::string &name) const
    {
        if (name == "#")
            return &kZero;
        if (name == "@" || name == "*")
            return &kNone;
        const auto it = m_vars.find(name);
        return it == m_vars.end() ? nullptr : &it->second;
    }

    void parameter(const std::string &name, const std::string &index, bool quoted)
    {
        if (name == "?" || name == "$" || name == "!" || name == "-")
            return opaque("$" + name, quoted);
        const std::vector<std::string> *v = lookup(name);
        if (!v) {
            m_result.unset.push_back(std::isdigit(static_cast<unsigned char>(name[0])) ? "$" + name : name);
            if (quoted)
                m_started = true;
            return;
        }
        if (index == "@" || index == "*" || name == "@" || name == "*")
            return value(*v, quoted, index == "@" || name == "@");
        std::size_t at = 0;
        if (!index.empty()) {
            const std::optional<long long> n = Arithmetic(index, m_vars).run();
            if (!n || *n < 0)
                return opaque("${" + name + "[" + index + "]}", quoted);
            at = static_cast<std::size_t>(*n);
        }
        value({at < v->size() ? (*v)[at] : std::string()}, quoted, false);
    }

    // Values of one expansion: quoted "${A[@]}" gives one field per element,
    // unquoted values are split on blanks, otherwise they join with spaces.
    void value(const std::vector<std::string> &values, bool quoted, bool eachField)
    {
        if (quoted || !m_split) {
            m_started = true;
            for (std::size_t k = 0; k < values.size(); ++k) {
                if (k > 0) {
                    if (eachField && m_split) {
                        m_result.fields.push_back(m_current);
                        m_current.clear();
                    } else {
                        m_current += ' ';
                    }
                }
                m_current += values[k];
            }
            return;
        }
        std::string joined;
        for (std::size_t k = 0; k < values.size(); ++k)
            joined += (k ? " " : "") + values[k];
        std::size_t p = 0;
        while (p < joined.size()) {
            if (std::isspace(static_cast<unsigned char>(joined[p]))) {
                if (m_started) {
                    m_result.fields.push_back(m_current);
                    m_current.clear();
                    m_started = false;
                }
                ++p;
                continue;
            }
            m_current += joined[p++];
            m_started = true;
        }
    }

    void literal(std::string_view s)
    {
        m_current.append(s);
        m_started = true;
    }

    void opaque(std::string_view text, bool quoted)
    {
        m_result.opaque = true;
        (void)quoted;
        literal(text);
    }

    static inline const std::vector<std::string> kZero = {"0"};
    static inline const std::vector<std::string> kNone = {};
    const Variables &m_vars;
    bool m_split;
    bool m_started = false;
    std::string m_current;
    Expansion m_result;
};

// ---------------------------------------------------------------- conditions

enum class Truth { False, True, Unknown };

Truth truthOf(bool b)
{
    return b ? Truth::True : Truth::False;
}
Truth negate(Truth t)
{
    return t == Truth::Unknown ? t : truthOf(t == Truth::False);
}
Truth both(Truth a, Truth b)
{
    if (a == Truth::False || b == Truth::False)
        return Truth::False;
    return a == Truth::True && b == Truth::True ? Truth::True : Truth::Unknown;
}
Truth either(Truth a, Truth b)
{
    if (a == Truth::True || b == Truth::True)
        return Truth::True;
    return a == Truth::False && b == Truth::False ? Truth::False : Truth::Unknown;
}

// A condition of if/elif: `[[ ... ]]`, `[ ... ]`, `test ...`, true, false,
// joined by && || and negated by !, over the words as written.
class Condition
{
public:
    Condition(const std::vector<Token> &tokens, const Variables &vars)
        : m_t(tokens)
        , m_vars(vars)
    { }

    Truth run()
    {
        const Truth t = list();
        return m_i == m_t.size() ? t : Truth::Unknown;
    }

private:
    bool at(std::string_view word) const
    {
        return m_i < m_t.size() && m_t[m_i].kind == Tok::Word && m_t[m_i].text == word;
    }
    bool atKind(Tok kind) const { return m_i < m_t.size() && m_t[m_i].kind == kind; }

    // Commands joined by && and ||, left to right as bash runs them.
    Truth list()
    {
        Truth t = command();
        for (;;) {
            if (atKind(Tok::AndIf)) {
                ++m_i;
                t = both(t, command());
            } else if (atKind(Tok::OrIf)) {
                ++m_i;
                t = either(t, command());
            } else {
                return t;
            }
        }
    }

    Truth command()
    {
        if (at("!")) {
            ++m_i;
            return negate(command());
        }
        if (at("true") || at("false") || at(":")) {
            const bool v = !at("false");
            ++m_i;
            return truthOf(v);
        }
        const bool double_ = at("[[");
        if (!double_ && !at("[") && !at("test")) {
            skipCommand();
            return Truth::Unknown; // a command's exit status: not decided without running it
        }
        const std::string close = double_ ? "]]" : at("[") ? "]" : "";
        ++m_i;
        std::vector<std::string> words;
        bool opaque = false;
        while (m_i < m_t.size() && !(close.empty() ? m_t[m_i].kind != Tok::Word : at(close))) {
            const Token &tk = m_t[m_i++];
            if (tk.kind == Tok::AndIf || tk.kind == Tok::OrIf) {
                words.push_back(tk.text);
                continue;
            }
            Expansion e = Expander(m_vars, false).run(tk.text);
            opaque = opaque || e.opaque;
            // An operand marked so that an operator word in a variable is not read as one.
            words.push_back((tk.text.find_first_of("$\"'") != std::string::npos ? "\x01" : "") + e.fields[0]);
        }
        if (!close.empty())
            ++m_i;
        if (opaque)
            return Truth::Unknown;
        std::size_t k = 0;
        const Truth t = TestExpression{words, k}.orExpr();
        return k == words.size() ? t : Truth::Unknown;
    }

    void skipCommand()
    {
        while (m_i < m_t.size() && m_t[m_i].kind == Tok::Word)
            ++m_i;
    }

    struct TestExpression
    {
        const std::vector<std::string> &w;
        std::size_t &k;

        bool is(std::string_view op) const { return k < w.size() && w[k] == op; }
        static std::string operand(const std::string &s) { return !s.empty() && s[0] == '\x01' ? s.substr(1) : s; }

        Truth orExpr()
        {
            Truth t = andExpr();
            while (is("||") || is("-o")) {
                ++k;
                t = either(t, andExpr());
            }
            return t;
        }
        Truth andExpr()
        {
            Truth t = notExpr();
            while (is("&&") || is("-a")) {
                ++k;
                t = both(t, notExpr());
            }
            return t;
        }
        Truth notExpr()
        {
            if (is("!")) {
                ++k;
                return negate(notExpr());
            }
            if (is("(")) {
                ++k;
                const Truth t = orExpr();
                if (is(")"))
                    ++k;
                return t;
            }
            return primary();
        }
        Truth primary()
        {
            if (k >= w.size())
                return Truth::Unknown;
            if (k + 1 < w.size() && (w[k] == "-z" || w[k] == "-n")) {
                const bool empty = operand(w[k + 1]).empty();
                const bool z = w[k] == "-z";
                k += 2;
                return truthOf(z == empty);
            }
            if (k + 1 < w.size() && w[k].size() == 2 && w[k][0] == '-'
                && std::isalpha(static_cast<unsigned char>(w[k][1]))) {
                k += 2;
                return Truth::Unknown; // a file test (-f, -d, -e, ...): depends on the machine
            }
            if (k + 2 < w.size() && binary(w[k + 1]))
                return compare();
            return truthOf(!operand(w[k++]).empty());
        }
        static bool binary(const std::string &op)
        {
            for (const char *o : {"==", "=", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "=~"})
                if (op == o)
                    return true;
            return false;
        }
        Truth compare()
        {
            const std::string a = operand(w[k]), op = w[k + 1], b = operand(w[k + 2]);
            k += 3;
            if (op == "==" || op == "=" || op == "!=") {
                if (w[k - 1][0] != '\x01' && b.find_first_of("*?[") != std::string::npos)
                    return Truth::Unknown; // a glob pattern
                return truthOf((a == b) == (op != "!="));
            }
            if (op == "=~")
                return Truth::Unknown;
            long long x = 0, y = 0;
            try {
                x = std::stoll(a);
                y = std::stoll(b);
            } catch (const std::exception &) {
                return Truth::Unknown;
            }
            if (op == "-eq")
                return truthOf(x == y);
            if (op == "-ne")
                return truthOf(x != y);
            if (op == "-lt")
                return truthOf(x < y);
            if (op == "-le")
                return truthOf(x <= y);
            if (op == "-gt")
                return truthOf(x > y);
            return truthOf(x >= y);
        }
    };

    const std::vector<Token> &m_t;
    const Variables &m_vars;
    std::size_t m_i = 0;
};

// ---------------------------------------------------------------- statements

bool isSeparator(Tok kind)
{
    return kind == Tok::Sep || kind == Tok::Newline || kind == Tok::AndIf || kind == Tok::OrIf || kind == Tok::Pipe;
}

// The script's statements in order, with the variables they set.
class Runner
{
public:
    Runner(std::vector<Token> tokens, ShellScript &out)
        : m_t(std::move(tokens))
        , m_out(out)
    { }

    void run()
    {
        while (m_i < m_t.size() && !m_exited) {
            if (isSeparator(m_t[m_i].kind)) {
                ++m_i;
                continue;
            }
            statement();
        }
        m_out.variables = m_vars;
    }

private:
    struct Frame
    {
        bool parentActive;
        bool taken;
        bool active;
        bool undecided;
    };

    bool active() const { return m_frames.empty() || m_frames.back().active; }

    void warn(int line, std::string message)
    {
        m_out.problems.push_back({"line " + std::to_string(line), std::move(message), {}, Problem::Severity::Warning});
    }

    const Token &word() const { return m_t[m_i]; }
    bool atWord(std::string_view w) const
    {
        return m_i < m_t.size() && m_t[m_i].kind == Tok::Word && m_t[m_i].text == w;
    }

    void statement()
    {
        const Token &first = word();
        if (first.kind != Tok::Word && first.kind != Tok::ArrayOpen) {
            ++m_i; // a stray ")" or redirection
            return;
        }
        const std::string &w = first.text;
        if (w == "if" || w == "elif")
            return condition(w == "if");
        if (w == "then" || w == "do" || w == "{") {
            ++m_i;
            return;
        }
        if (w == "else") {
            if (!m_frames.empty()) {
                Frame &f = m_frames.back();
                f.active = f.parentActive && !f.taken && !f.undecided;
            }
            ++m_i;
            return;
        }
        if (w == "fi") {
            if (!m_frames.empty())
                m_frames.pop_back();
            ++m_i;
            return;
        }
        if (w == "for" || w == "while" || w == "until" || w == "select" || w == "case" || w == "function"
            || (w.size() > 2 && w.substr(w.size() - 2) == "()"))
            return skipBlock(w);
        simpleCommand();
    }

    // if/elif CONDITION; then — the condition is every token up to "then".
    void condition(bool opening)
    {
        const int line = word().line;
        ++m_i;
        std::vector<Token> cond;
        std::string text;
        while (m_i < m_t.size()
               && !(m_t[m_i].kind == Tok::Word && m_t[m_i].text == "then"
                    && (cond.empty() || isSeparator(m_t[m_i - 1].kind)))) {
            if (m_t[m_i].kind != Tok::Sep && m_t[m_i].kind != Tok::Newline) {
                cond.push_back(m_t[m_i]);
                text += (text.empty() ? "" : " ") + m_t[m_i].text;
            }
            ++m_i;
        }
        if (opening) {
            const bool parent = active();
            const Truth t = parent ? Condition(cond, m_vars).run() : Truth::False;
            m_frames.push_back({parent, t == Truth::True, parent && t == Truth::True, parent && t == Truth::Unknown});
            if (parent && t == Truth::Unknown)
                warn(line, "cannot decide `if " + text + "` without running it: neither branch is read");
            return;
        }
        if (m_frames.empty())
            return;
        Frame &f = m_frames.back();
        if (!f.parentActive || f.taken || f.undecided) {
            f.active = false;
            return;
        }
        const Truth t = Condition(cond, m_vars).run();
        f.active = t == Truth::True;
        f.taken = f.active;
        if (t == Truth::Unknown) {
            f.undecided = true;
            warn(line, "cannot decide `elif " + text + "` without running it: neither branch is read");
        }
    }

    // Loops, case and function definitions: skipped to their end.
    void skipBlock(const std::string &w)
    {
        const int line = word().line;
        const bool loop = w != "case" && w != "function" && w.substr(w.size() - 2) != "()";
        const std::string open = loop ? "do" : w == "case" ? "case" : "{";
        const std::string close = loop ? "done" : w == "case" ? "esac" : "}";
        int depth = 0;
        bool opened = false;
        for (; m_i < m_t.size(); ++m_i) {
            const Token &t = m_t[m_i];
            if (t.kind != Tok::Word)
                continue;
            if (t.text == open) {
                ++depth;
                opened = true;
            } else if (t.text == close && --depth == 0 && opened) {
                ++m_i;
                break;
            }
        }
        if (active())
            warn(line, std::string(loop          ? "a loop"
                                   : w == "case" ? "a case statement"
                                                 : "a function")
                           + " is not followed: the commands and assignments inside it are not read");
    }

    void simpleCommand()
    {
        const int line = word().line;
        std::vector<const Token *> words;
        bool assignmentsOnly = true;
        while (m_i < m_t.size() && !isSeparator(m_t[m_i].kind)) {
            const Token &t = m_t[m_i];
            if (t.kind == Tok::Redirect) {
                m_i += 2; // the operator and its target
                continue;
            }
            if (t.kind == Tok::ArrayOpen) {
                array();
                continue;
            }
            if (t.kind == Tok::ArrayClose || t.kind != Tok::Word) {
                ++m_i;
                continue;
            }
            if (assignmentsOnly && words.empty() && assignment(t)) {
                ++m_i;
                continue;
            }
            assignmentsOnly = false;
            words.push_back(&t);
            ++m_i;
        }
        if (!words.empty() && active())
            command(words, line);
    }

    // NAME=( ... ) or NAME+=( ... ), the elements expanded and split.
    void array()
    {
        std::string name = m_t[m_i].text;
        name.pop_back();
        const bool append = !name.empty() && name.back() == '+';
        if (append)
            name.pop_back();
        ++m_i;
        std::vector<std::string> values;
        while (m_i < m_t.size() && m_t[m_i].kind != Tok::ArrayClose) {
            if (m_t[m_i].kind == Tok::Word)
                for (std::string &f : Expander(m_vars, true).run(m_t[m_i].text).fields)
                    values.push_back(std::move(f));
            ++m_i;
        }
        ++m_i;
        if (!active())
            return;
        std::vector<std::string> &v = m_vars[name];
        if (!append)
            v.clear();
        v.insert(v.end(), values.begin(), values.end());
    }

    // NAME=value or NAME+=value; false when the word is not an assignment.
    bool assignment(const Token &t)
    {
        const std::string &s = t.text;
        if (s.empty() || !isNameStart(s[0]))
            return false;
        std::size_t k = 1;
        while (k < s.size() && isNameChar(s[k]))
            ++k;
        const bool append = k + 1 < s.size() && s[k] == '+' && s[k + 1] == '=';
        if (!(k < s.size() && (s[k] == '=' || append)))
            return false;
        if (!active())
            return true;
        const std::string name = s.substr(0, k);
        const Expansion e = Expander(m_vars, false).run(std::string_view(s).substr(k + (append ? 2 : 1)));
        std::vector<std::string> &v = m_vars[name];
        if (append && !v.empty())
            v[0] += e.fields[0];
        else
            v = {e.fields[0]};
        return true;
    }

    void command(const std::vector<const Token *> &words, int line)
    {
        const std::string &name = words[0]->text;
        if (name == "export" || name == "declare" || name == "local" || name == "readonly" || name == "typeset") {
            for (std::size_t k = 1; k < words.size(); ++k)
                if (words[k]->text.empty() || words[k]->text[0] != '-')
                    assignment(*words[k]);
            return;
        }
        if (name == "unset") {
            for (std::size_t k = 1; k < words.size(); ++k)
                m_vars.erase(words[k]->text);
            return;
        }
        if (name == "exit") {
            m_exited = true;
            return;
        }
        if (name == "source" || name == ".")
            warn(line, "`" + name + (words.size() > 1 ? " " + words[1]->text : std::string()) + "` is not read");
        ShellCommand cmd;
        cmd.line = line;
        for (const Token *t : words) {
            Expansion e = Expander(m_vars, true).run(t->text);
            if (e.fields.empty()) {
                // Expanded to nothing: the word before it is the one a message names.
                if (!cmd.words.empty())
                    cmd.words.back().unset.insert(cmd.words.back().unset.end(), e.unset.begin(), e.unset.end());
                continue;
            }
            for (std::string &f : e.fields)
                cmd.words.push_back({std::move(f), e.unset});
        }
        if (!cmd.words.empty())
            m_out.commands.push_back(std::move(cmd));
    }

    std::vector<Token> m_t;
    ShellScript &m_out;
    std::size_t m_i = 0;
    Variables m_vars;
    std::vector<Frame> m_frames;
    bool m_exited = false;
};

} // namespace

ShellScript readShellScript(std::string_view text)
{
    ShellScript out;
    std::vector<Token> tokens = Lexer(text, out).run();
    Runner(std::move(tokens), out).run();
    return out;
}

} // namespace memledger
