//! `resource.Quantity` parsing and canonical formatting, and Go `time.Duration` parsing and
//! `String()` formatting (spec diff.md §4.5).
//!
//! A quantity is held exactly as `mantissa × 10^-scale` (after parsing, values finer than
//! nano are rounded up to nano, as apimachinery does), plus the suffix family it was written
//! in, which decides the canonical form.
#![allow(dead_code)] // crate-internal seams of the diff pipeline; not every one is wired yet

/// The suffix family of a quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `Ki Mi Gi Ti Pi Ei`.
    BinarySI,
    /// `n u m "" k M G T P E`.
    DecimalSI,
    /// `e<n>` / `E<n>`.
    DecimalExponent,
}

/// An exact decimal quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quantity {
    /// Value × 10^scale.
    mantissa: i128,
    /// Number of decimal places (0..=9 after parsing).
    scale: u32,
    format: Format,
}

/// Why a quantity did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuantityError;

impl std::fmt::Display for QuantityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    }
}

const MAX_SCALE: u32 = 9;

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    /// `resource.ParseQuantity`.
    pub(crate) fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(QuantityError);
        }
        // Not empty (checked above), so byte 0 exists.
        let (negative, rest) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (num, suffix) = rest.split_at(num_end);
        let (int_part, frac_part) = match num.split_once('.') {
            Some((i, f)) => {
                if f.contains('.') {
                    return Err(QuantityError);
                }
                (i, f)
            }
            None => (num, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(QuantityError);
        }
        let digits = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        let mut mantissa: i128 =
            if digits.is_empty() { 0 } else { digits.parse().map_err(|_| QuantityError)? };
        let mut scale = i64::try_from(frac_part.len()).map_err(|_| QuantityError)?;
        let format = match suffix {
            "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => {
                let exp: i64 = match suffix {
                    "n" => -9,
                    "u" => -6,
                    "m" => -3,
                    "k" => 3,
                    "M" => 6,
                    "G" => 9,
                    "T" => 12,
                    "P" => 15,
                    "E" => 18,
                    _ => 0,
                };
                scale -= exp;
                Format::DecimalSI
            }
            "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
                let k: u32 = match suffix {
                    "Ki" => 1,
                    "Mi" => 2,
                    "Gi" => 3,
                    "Ti" => 4,
                    "Pi" => 5,
                    _ => 6,
                };
                mantissa = mantissa.checked_mul(1i128 << (10 * k)).ok_or(QuantityError)?;
                Format::BinarySI
            }
            _ => {
                let exp = suffix
                    .strip_prefix('e')
                    .or_else(|| suffix.strip_prefix('E'))
                    .ok_or(QuantityError)?;
                let exp: i64 = exp.parse().map_err(|_| QuantityError)?;
                scale -= exp;
                Format::DecimalExponent
            }
        };
        if negative {
            mantissa = -mantissa;
        }
        // Normalise to a non-negative scale, then round up (away from zero) below nano.
        if scale < 0 {
            let f =
                pow10(u32::try_from(-scale).map_err(|_| QuantityError)?).ok_or(QuantityError)?;
            mantissa = mantissa.checked_mul(f).ok_or(QuantityError)?;
            scale = 0;
        }
        let mut scale = u32::try_from(scale).map_err(|_| QuantityError)?;
        if scale > MAX_SCALE {
            let f = pow10(scale - MAX_SCALE).ok_or(QuantityError)?;
            mantissa = div_away_from_zero(mantissa, f);
            scale = MAX_SCALE;
        }
        Ok(Quantity { mantissa, scale, format })
    }

    /// Whether the value is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// `Quantity.RoundUp(scale)` to `places` decimal places (e.g. 3 for milli).
    pub(crate) fn round_up(&self, places: u32) -> Quantity {
        if self.scale <= places {
            return *self;
        }
        let f = pow10(self.scale - places).unwrap_or(1);
        Quantity {
            mantissa: div_away_from_zero(self.mantissa, f),
            scale: places,
            format: self.format,
        }
    }

    /// The canonical string (`Quantity.String()`).
    pub(crate) fn canonical(&self) -> String {
        if self.mantissa == 0 {
            return "0".to_owned();
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            let one = pow10(self.scale).unwrap_or(1);
            let small = self.mantissa.abs() < 1024 * one;
            let integral = self.mantissa % one == 0;
            if small || !integral {
                format = Format::DecimalSI;
            }
        }
        if format == Format::BinarySI {
            let mut m = self.mantissa / pow10(self.scale).unwrap_or(1);
            let mut k = 0;
            while k < 6 && m % 1024 == 0 {
                m /= 1024;
                k += 1;
            }
            // k <= 6 by the loop condition.
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k];
            return format!("{m}{suffix}");
        }
        // Decimal: the largest exponent (multiple of 3) that keeps an integer mantissa.
        let mut m = self.mantissa;
        let mut exp = -i64::from(self.scale);
        while m % 10 == 0 {
            m /= 10;
            exp += 1;
        }
        let mut e3 = exp.div_euclid(3) * 3;
        if format == Format::DecimalSI {
            e3 = e3.clamp(-9, 18);
        }
        let shift = u32::try_from(exp - e3).unwrap_or(0);
        let m = m * pow10(shift).unwrap_or(1);
        let suffix = match format {
            Format::DecimalExponent if e3 == 0 => String::new(),
            Format::DecimalExponent => format!("e{e3}"),
            _ => match e3 {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                _ => "",
            }
            .to_owned(),
        };
        format!("{m}{suffix}")
    }
}

fn div_away_from_zero(m: i128, f: i128) -> i128 {
    let q = m / f;
    if m % f == 0 {
        q
    } else if m > 0 {
        q + 1
    } else {
        q - 1
    }
}

/// Canonicalises a quantity string (`ParseQuantity(s).String()`).
pub(crate) fn canonical_quantity(s: &str) -> Result<String, QuantityError> {
    Quantity::parse(s).map(|q| q.canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> String {
        canonical_quantity(s).unwrap_or_else(|_| panic!("{s} should parse"))
    }

    #[test]
    fn canonical_quantities() {
        for (input, want) in [
            ("1.5", "1500m"),
            ("1000", "1k"),
            ("1.5Gi", "1536Mi"),
            ("1.25G", "1250M"),
            ("0.5Ki", "512"),
            ("0.2", "200m"),
            ("1000m", "1"),
            ("2000m", "2"),
            ("1024Mi", "1Gi"),
            ("32Mi", "32Mi"),
            ("0", "0"),
            ("0Mi", "0"),
            ("-1.5", "-1500m"),
            ("100Ki", "100Ki"),
            ("1023Ki", "1023Ki"),
            ("1e3", "1e3"),
            ("1E6", "1e6"),
            ("1.5e3", "1500"),
            ("0.1", "100m"),
            ("1073741824", "1073741824"),
            ("512", "512"),
            ("1m", "1m"),
            ("100u", "100u"),
            ("1n", "1n"),
            ("+5", "5"),
            (" 3 ", "3"),
            ("1E", "1E"),
            ("12e6", "12e6"),
        ] {
            assert_eq!(c(input), want, "{input}");
        }
    }

    #[test]
    fn below_nano_rounds_up() {
        assert_eq!(c("0.0000000001"), "1n");
        assert_eq!(c("1.0000000001"), "1000000001n");
        assert_eq!(c("-0.0000000001"), "-1n");
    }

    #[test]
    fn round_up_to_milli() {
        let q = Quantity::parse("0.0001").expect("parse");
        assert_eq!(q.round_up(3).canonical(), "1m");
        assert_eq!(Quantity::parse("1.5").expect("parse").round_up(3).canonical(), "1500m");
        assert!(Quantity::parse("0").expect("parse").is_zero());
    }

    #[test]
    fn invalid_quantities() {
        for s in ["invalid", "", "1.2.3", "1Xi", "Mi", ".", "1e", "--1", "1 Mi"] {
            assert!(Quantity::parse(s).is_err(), "{s}");
        }
    }
}

#[cfg(test)]
mod robustness {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(crate::tests::support::cases(256))]

        #[test]
        fn parsers_never_panic(s in "[-+0-9.eEinumkKMGTPs µhé:TZ]{0,24}") {
            if let Ok(q) = Quantity::parse(&s) {
                // The canonical form parses back to the same value.
                let c = q.canonical();
                let again = Quantity::parse(&c).expect("canonical form parses");
                prop_assert_eq!(again.canonical(), c);
                let _ = q.round_up(3);
            }
            if let Ok(d) = crate::vocabulary::parse_go_duration(&s) {
                let f = crate::vocabulary::format_go_duration(d);
                prop_assert_eq!(crate::vocabulary::parse_go_duration(&f), Ok(d));
            }
            let _ = crate::diff::remarshal::canonical_time(&s, false);
        }

        #[test]
        fn integer_quantities_round_trip(n in -1_000_000_000_000i64..1_000_000_000_000i64) {
            let q = Quantity::parse(&n.to_string()).expect("integer");
            let back = Quantity::parse(&q.canonical()).expect("canonical");
            prop_assert_eq!(back.round_up(0), Quantity::parse(&n.to_string()).expect("integer").round_up(0));
        }
    }
}
