//! fio's arithmetic in option values (`size=2*$mb_memory`, `bs=(1+1)*4k`): whole numbers with
//! an optional size unit (powers of 1024), `+ - * / %`, `^` (power, binding tighter and to the
//! right, as fio's parser does) and parentheses, evaluated in 128 bits
//! and checked to fit a u64. Bounded recursion, so no input can overflow the stack.

const MAX_DEPTH: usize = 64;

/// What is wrong with an arithmetic value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    #[error("unexpected '{0}' in an arithmetic value")]
    Unexpected(char),
    #[error("an arithmetic value must be from 0 to 2^64-1")]
    NotU64,
    #[error("an arithmetic value out of range")]
    OutOfRange,
    #[error("division by zero in an arithmetic value")]
    DivisionByZero,
    #[error("an arithmetic value nested too deeply")]
    TooDeep,
    #[error("a power's exponent must be a whole number of 0 or more")]
    Exponent,
    #[error("a '(' without its ')' in an arithmetic value")]
    Unclosed,
    #[error("expected a number or '(' in an arithmetic value")]
    ExpectedNumber,
}

/// Evaluates `text`; the error says what is wrong.
pub fn eval(text: &str) -> Result<u64, ExprError> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    let v = p.sum()?;
    p.blanks();
    if p.at != p.s.len() {
        return Err(ExprError::Unexpected(p.s[p.at] as char));
    }
    u64::try_from(v).map_err(|_| ExprError::NotU64)
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    depth: usize,
}

const LIMIT: i128 = u64::MAX as i128;

impl Parser<'_> {
    fn blanks(&mut self) {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.blanks();
        self.s.get(self.at).copied()
    }

    fn checked(v: Option<i128>) -> Result<i128, ExprError> {
        v.filter(|v| v.abs() <= LIMIT).ok_or(ExprError::OutOfRange)
    }

    fn sum(&mut self) -> Result<i128, ExprError> {
        let mut v = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.at += 1;
            let r = self.product()?;
            v = Self::checked(if op == b'+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            })?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i128, ExprError> {
        let mut v = self.power()?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.peek() {
            self.at += 1;
            let r = self.power()?;
            v = Self::checked(match op {
                b'*' => v.checked_mul(r),
                _ if r == 0 => return Err(ExprError::DivisionByZero),
                b'/' => v.checked_div(r),
                _ => v.checked_rem(r),
            })?;
        }
        Ok(v)
    }

    /// `a ^ b ^ c` is `a ^ (b ^ c)`.
    fn power(&mut self) -> Result<i128, ExprError> {
        let base = self.atom()?;
        if self.peek() != Some(b'^') {
            return Ok(base);
        }
        self.at += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::TooDeep);
        }
        let exp = self.power()?;
        self.depth -= 1;
        let exp = u32::try_from(exp).map_err(|_| ExprError::Exponent)?;
        Self::checked(base.checked_pow(exp))
    }

    fn atom(&mut self) -> Result<i128, ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::TooDeep);
        }
        let v = match self.peek() {
            Some(b'(') => {
                self.at += 1;
                let v = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err(ExprError::Unclosed);
                }
                self.at += 1;
                let unit = self.unit()?;
                Self::checked(v.checked_mul(unit))?
            }
            Some(b'-') => {
                self.at += 1;
                -self.atom()?
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.at;
                while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
                    self.at += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.at]).expect("ASCII digits");
                let n: i128 = digits
                    .parse()
                    .ok()
                    .filter(|n| *n <= LIMIT)
                    .ok_or(ExprError::OutOfRange)?;
                let unit = self.unit()?;
                Self::checked(n.checked_mul(unit))?
            }
            _ => return Err(ExprError::ExpectedNumber),
        };
        self.depth -= 1;
        Ok(v)
    }

    /// An optional unit right after a number: k, m, g, t, p (with an optional b), powers of
    /// 1024.
    fn unit(&mut self) -> Result<i128, ExprError> {
        let power = match self.s.get(self.at).map(u8::to_ascii_lowercase) {
            Some(b'k') => 1,
            Some(b'm') => 2,
            Some(b'g') => 3,
            Some(b't') => 4,
            Some(b'p') => 5,
            _ => return Ok(1),
        };
        self.at += 1;
        if self
            .s
            .get(self.at)
            .is_some_and(|c| c.eq_ignore_ascii_case(&b'b'))
        {
            self.at += 1;
        }
        Ok(1i128 << (10 * power))
    }
}

#[cfg(test)]
mod tests {
    use super::eval;

    #[test]
    fn arithmetic() {
        assert_eq!(eval("2*1024").unwrap(), 2048);
        assert_eq!(eval("(1+1)*4k").unwrap(), 8192);
        assert_eq!(eval(" 10 - 2 * 3 ").unwrap(), 4);
        assert_eq!(eval("(10-2)*3").unwrap(), 24);
        assert_eq!(eval("7%4+1m").unwrap(), 3 + (1 << 20));
        assert_eq!(eval("2^10").unwrap(), 1024);
        assert_eq!(eval("2^3^2").unwrap(), 512, "right-associative");
        assert_eq!(eval("3*2^2+1").unwrap(), 13, "binds tighter than * and +");
        assert_eq!(eval("(1+1)^(2*2)").unwrap(), 16);
        assert_eq!(eval("2^63").unwrap(), 1 << 63);
        for bad in [
            "2^64",
            "2^-1",
            "2^",
            &"2^".repeat(10_000),
            "",
            "1+",
            "(1",
            "1/0",
            "2-3",
            "99999999999999999999999",
            "4x",
            "(((((",
        ] {
            assert!(eval(bad).is_err(), "{bad}");
        }
        assert!(eval(&"(".repeat(10_000)).is_err());
    }
}
