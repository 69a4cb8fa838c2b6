//! `--filter`: a small regular-expression search, so the same filters work
//! here as in google-benchmark's `--benchmark_filter` (no regex crate needed).
//!
//! Supported: literals, `.`, `[...]`/`[^...]` (ranges), `\d \w \s` and `\`
//! escapes, groups `( )` and `(?: )`, alternation `|`, `^`, `$`, and the
//! greedy quantifiers `* + ?` and `{m}`, `{m,}`, `{m,n}`. The pattern is
//! searched for anywhere in the name (like std::regex_search). A pattern that
//! does not parse is used as a plain substring. A leading `-` negates the
//! filter, as in google-benchmark.

#[derive(Debug)]
enum Node {
    Char(char),
    Any,
    Class(Vec<(char, char)>, bool),
    Start,
    End,
    Group(Vec<Vec<Piece>>),
}

#[derive(Debug)]
struct Piece {
    node: Node,
    min: u32,
    max: u32,
}

pub struct Filter {
    negate: bool,
    kind: Kind,
}

enum Kind {
    All,
    Regex(Vec<Vec<Piece>>),
    Substring(String),
}

impl Filter {
    pub fn new(pattern: Option<&str>) -> Filter {
        let (negate, pat) = match pattern {
            None => return Filter { negate: false, kind: Kind::All },
            Some(p) => match p.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, p),
            },
        };
        if pat.is_empty() || pat == "." || pat == ".*" || pat == "all" {
            return Filter { negate, kind: Kind::All };
        }
        let chars: Vec<char> = pat.chars().collect();
        let mut p = Parser { s: &chars, i: 0 };
        let kind = match p.alt() {
            Some(alt) if p.i == chars.len() => Kind::Regex(alt),
            _ => Kind::Substring(pat.to_string()),
        };
        Filter { negate, kind }
    }

    pub fn matches(&self, name: &str) -> bool {
        let hit = match &self.kind {
            Kind::All => true,
            Kind::Substring(s) => name.contains(s.as_str()),
            Kind::Regex(alt) => {
                let s: Vec<char> = name.chars().collect();
                (0..=s.len()).any(|start| m_alt(alt, &s, start, &|_| true))
            }
        };
        hit != self.negate
    }
}

struct Parser<'a> {
    s: &'a [char],
    i: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn alt(&mut self) -> Option<Vec<Vec<Piece>>> {
        let mut alts = vec![self.seq()?];
        while self.peek() == Some('|') {
            self.i += 1;
            alts.push(self.seq()?);
        }
        Some(alts)
    }

    fn seq(&mut self) -> Option<Vec<Piece>> {
        let mut seq = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let node = self.atom()?;
            let (min, max) = self.quantifier()?;
            seq.push(Piece { node, min, max });
        }
        Some(seq)
    }

    fn quantifier(&mut self) -> Option<(u32, u32)> {
        let q = match self.peek() {
            Some('*') => (0, u32::MAX),
            Some('+') => (1, u32::MAX),
            Some('?') => (0, 1),
            Some('{') => {
                let close = self.s[self.i..].iter().position(|&c| c == '}')? + self.i;
                let body: String = self.s[self.i + 1..close].iter().collect();
                let (lo, hi) = match body.split_once(',') {
                    None => {
                        let n = body.trim().parse().ok()?;
                        (n, n)
                    }
                    Some((a, b)) => {
                        let lo = a.trim().parse().ok()?;
                        let hi = if b.trim().is_empty() { u32::MAX } else { b.trim().parse().ok()? };
                        (lo, hi)
                    }
                };
                self.i = close;
                (lo, hi)
            }
            _ => return Some((1, 1)),
        };
        self.i += 1;
        Some(q)
    }

    fn escape_class(c: char) -> Option<(Vec<(char, char)>, bool)> {
        let digits = vec![('0', '9')];
        let word = vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
        let space = vec![(' ', ' '), ('\t', '\r')];
        match c {
            'd' => Some((digits, false)),
            'D' => Some((digits, true)),
            'w' => Some((word, false)),
            'W' => Some((word, true)),
            's' => Some((space, false)),
            'S' => Some((space, true)),
            _ => None,
        }
    }

    fn atom(&mut self) -> Option<Node> {
        let c = self.peek()?;
        self.i += 1;
        Some(match c {
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '(' => {
                if self.peek() == Some('?') {
                    if self.s.get(self.i + 1) == Some(&':') {
                        self.i += 2;
                    } else {
                        return None;
                    }
                }
                let alt = self.alt()?;
                if self.peek() != Some(')') {
                    return None;
                }
                self.i += 1;
                Node::Group(alt)
            }
            '[' => {
                let mut negate = false;
                if self.peek() == Some('^') {
                    negate = true;
                    self.i += 1;
                }
                let mut ranges = Vec::new();
                let mut first = true;
                loop {
                    let mut c = self.peek()?;
                    self.i += 1;
                    if c == ']' && !first {
                        break;
                    }
                    first = false;
                    if c == '\\' {
                        c = self.peek()?;
                        self.i += 1;
                        if let Some((r, false)) = Self::escape_class(c) {
                            ranges.extend(r);
                            continue;
                        }
                    }
                    if self.peek() == Some('-') && self.s.get(self.i + 1).map_or(false, |&n| n != ']') {
                        let hi = self.s[self.i + 1];
                        self.i += 2;
                        ranges.push((c, hi));
                    } else {
                        ranges.push((c, c));
                    }
                }
                Node::Class(ranges, negate)
            }
            '\\' => {
                let e = self.peek()?;
                self.i += 1;
                match Self::escape_class(e) {
                    Some((r, neg)) => Node::Class(r, neg),
                    None => Node::Char(match e {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    }),
                }
            }
            '*' | '+' | '?' | ')' => return None,
            other => Node::Char(other),
        })
    }
}

type Cont<'a> = &'a dyn Fn(usize) -> bool;

fn m_alt(alt: &[Vec<Piece>], s: &[char], i: usize, k: Cont) -> bool {
    alt.iter().any(|seq| m_seq(seq, s, i, k))
}

fn m_seq(seq: &[Piece], s: &[char], i: usize, k: Cont) -> bool {
    match seq.split_first() {
        None => k(i),
        Some((p, rest)) => m_piece(p, s, i, 0, &|j| m_seq(rest, s, j, k)),
    }
}

fn m_piece(p: &Piece, s: &[char], i: usize, count: u32, k: Cont) -> bool {
    if count < p.max
        && m_node(&p.node, s, i, &|j| {
            // An empty repetition cannot make progress: stop there.
            if j == i && count >= p.min {
                return false;
            }
            m_piece(p, s, j, count + 1, k)
        })
    {
        return true;
    }
    count >= p.min && k(i)
}

fn m_node(node: &Node, s: &[char], i: usize, k: Cont) -> bool {
    match node {
        Node::Char(c) => i < s.len() && s[i] == *c && k(i + 1),
        Node::Any => i < s.len() && k(i + 1),
        Node::Class(ranges, negate) => {
            i < s.len() && (ranges.iter().any(|&(lo, hi)| lo <= s[i] && s[i] <= hi) != *negate) && k(i + 1)
        }
        Node::Start => i == 0 && k(i),
        Node::End => i == s.len() && k(i),
        Node::Group(alt) => m_alt(alt, s, i, k),
    }
}

#[cfg(test)]
mod tests {
    use super::Filter;

    fn m(p: &str, s: &str) -> bool {
        Filter::new(Some(p)).matches(s)
    }

    #[test]
    fn regexes() {
        assert!(m("mutex", "mutex/uncontended/rust_std"));
        assert!(m("^mutex/", "mutex/uncontended/rust_std"));
        assert!(!m("^uncontended", "mutex/uncontended/rust_std"));
        assert!(m("threads:(1|2)$", "mutex/contended/rust_std/threads:2"));
        assert!(!m("threads:(1|2)$", "mutex/contended/rust_std/threads:16"));
        assert!(m("^(pool|chan)/", "chan/spsc_cap64/rust_crossbeam"));
        assert!(m("rust_(std|parking_lot)", "rwlock/uncontended_read/rust_parking_lot"));
        assert!(m("threads:[0-9]{2}", "mutex/contended/rust_std/threads:16"));
        assert!(!m("threads:[0-9]{2}", "mutex/contended/rust_std/threads:8"));
        assert!(m("contended.*tokio", "mutex/contended/rust_tokio/threads:4"));
        assert!(m("a+b*c?$", "xaab"));
        assert!(!m("-mutex", "mutex/handoff/rust_std"));
        assert!(m("-mutex", "pool/fib30/rayon"));
        assert!(m(".*", "anything"));
        // Does not parse: used as a substring.
        assert!(m("fib30(", "pool/fib30(x"));
    }
}
