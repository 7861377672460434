//! The night's date, as the command line gives it.

/// The night a batch belongs to: a real calendar date as `YYYY-MM-DD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NightDate(String);

impl NightDate {
    /// `text` when it is a real calendar date as `YYYY-MM-DD`.
    pub fn parse(text: &str) -> Option<NightDate> {
        is_date(text).then(|| NightDate(text.to_string()))
    }

    /// Today in UTC.
    pub fn today() -> NightDate {
        NightDate::of(std::time::SystemTime::now())
    }

    /// The UTC date `time` falls on.
    pub fn of(time: std::time::SystemTime) -> NightDate {
        let secs = match time.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => after.as_secs() as i64,
            Err(before) => -(before.duration().as_secs_f64().ceil() as i64),
        };
        let (year, month, day) =
            sparkdiag_contract::units::civil_from_days(secs.div_euclid(86_400));
        NightDate(format!("{year:04}-{month:02}-{day:02}"))
    }

    /// The night `--date` and `--modified-on` name, with the `--modified-on` day: `date` if
    /// given, else the day logs were modified on, else today. A value that is no calendar date
    /// is refused, naming its flag.
    pub fn for_night(
        date: Option<&str>,
        modified_on: Option<&str>,
    ) -> Result<(NightDate, Option<NightDate>), String> {
        let parse = |flag: &str, d: &str| {
            NightDate::parse(d).ok_or_else(|| {
                format!(
                    "{flag} {d}: expected a calendar date as YYYY-MM-DD, e.g. {}",
                    NightDate::today()
                )
            })
        };
        let modified_on = modified_on.map(|d| parse("--modified-on", d)).transpose()?;
        let date = match (date, &modified_on) {
            (Some(d), _) => parse("--date", d)?,
            (None, Some(day)) => day.clone(),
            (None, None) => NightDate::today(),
        };
        Ok((date, modified_on))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for NightDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A real calendar date as `YYYY-MM-DD`: it names the night's partitions (`date=...`), which
/// Spark and DuckDB read back as a date.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_night_is_its_date_else_the_day_modified_on_else_today() {
        let night = |date, modified_on| NightDate::for_night(date, modified_on);
        let day = |d| NightDate::parse(d).unwrap();
        assert_eq!(
            night(Some("2026-11-30"), Some("2026-11-29")),
            Ok((day("2026-11-30"), Some(day("2026-11-29"))))
        );
        assert_eq!(
            night(None, Some("2026-11-29")),
            Ok((day("2026-11-29"), Some(day("2026-11-29"))))
        );
        assert_eq!(night(None, None), Ok((NightDate::today(), None)));
        let refused = night(Some("2026-02-30"), None).unwrap_err();
        assert!(
            refused.starts_with("--date 2026-02-30: expected a calendar date as YYYY-MM-DD, e.g. "),
            "{refused}"
        );
        assert!(
            night(None, Some("yesterday"))
                .unwrap_err()
                .starts_with("--modified-on yesterday: ")
        );
    }

    #[test]
    fn dates_are_calendar_dates() {
        for good in ["2026-11-29", "2024-02-29", "2000-02-29", "1999-12-31"] {
            assert!(is_date(good), "{good}");
        }
        for bad in [
            "2026-13-45",
            "2026-00-10",
            "2026-02-29",
            "1900-02-29",
            "2026-04-31",
            "2026-11-00",
            "2026-1-29",
            "26-11-29xx",
            "today",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
        assert!(is_date(NightDate::today().as_str()));
        let day = std::time::Duration::from_secs(86_400);
        let at = |secs: u64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        assert_eq!(NightDate::of(at(0)).as_str(), "1970-01-01");
        assert_eq!(NightDate::of(at(0) - day / 2).as_str(), "1969-12-31");
        // 2026-12-06T23:59:59Z and a second later.
        assert_eq!(NightDate::of(at(1_796_601_599)).as_str(), "2026-12-06");
        assert_eq!(NightDate::of(at(1_796_601_600)).as_str(), "2026-12-07");
        assert_eq!(NightDate::parse("2026-02-29"), None);
        assert_eq!(
            NightDate::parse("2024-02-29").unwrap().as_str(),
            "2024-02-29"
        );
    }
}
