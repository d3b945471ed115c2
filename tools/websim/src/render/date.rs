//! HTTP dates (IMF-fixdate, RFC 9110) and the ISO dates of sitemaps, from Unix seconds, with the
//! proleptic Gregorian calendar arithmetic they need.

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn http_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (y, m, d) = civil(days);
    let t = secs % 86_400;
    format!(
        "{}, {d:02} {} {y} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[m as usize - 1],
        t / 3600,
        t % 3600 / 60,
        t % 60
    )
}

/// Parses an IMF-fixdate; `None` for anything else.
pub fn parse_http_date(s: &str) -> Option<u64> {
    let mut it = s.split_whitespace();
    let _day = it.next()?;
    let d: u32 = it.next()?.parse().ok()?;
    let mon = it.next()?;
    let m = MONTHS.iter().position(|&x| x == mon)? as u32 + 1;
    let y: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|x| x.parse::<u64>());
    let (hh, mm, ss) = (hms.next()?.ok()?, hms.next()?.ok()?, hms.next()?.ok()?);
    if it.next()? != "GMT" {
        return None;
    }
    let days = days_from_civil(y, m, d);
    u64::try_from(days)
        .ok()
        .map(|days| days * 86_400 + hh * 3600 + mm * 60 + ss)
}

pub(super) fn iso_date(secs: u64) -> String {
    let (y, m, d) = civil((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_round_trip() {
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        for t in [0u64, 1_767_225_600, 1_795_424_040] {
            assert_eq!(parse_http_date(&http_date(t)), Some(t));
        }
        assert_eq!(parse_http_date("yesterday"), None);
    }
}
