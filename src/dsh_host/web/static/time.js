// Human times for the browser: relative when near ("in 9 min", "2 min ago"), absolute otherwise
// ("today 18:08", "Thu 3 Dec 09:00"), in the browser's zone through Intl, with the exact UTC
// instant for tooltips. Pure module: the clock, the locale and the zone are injectable.

/** Under this distance (either way) a time reads relative to now. */
export const RELATIVE_WINDOW_MS = 60 * 60_000;
/** A past time closer than this reads "just now". */
export const JUST_NOW_MS = 10_000;

const WORDS = Object.freeze({
  en: Object.freeze({
    justNow: "just now",
    future: (amount) => `in ${amount}`,
    past: (amount) => `${amount} ago`,
    today: "today",
    tomorrow: "tomorrow",
    yesterday: "yesterday",
    s: "s",
    min: "min",
    h: "h",
    d: "d",
  }),
  zh: Object.freeze({
    justNow: "刚刚",
    future: (amount) => `${amount}后`,
    past: (amount) => `${amount}前`,
    today: "今天",
    tomorrow: "明天",
    yesterday: "昨天",
    s: "秒",
    min: "分钟",
    h: "小时",
    d: "天",
  }),
});

function localeOf(value) {
  return typeof value === "string" && /^zh/i.test(value) ? "zh" : "en";
}

function pad(value) {
  return String(value).padStart(2, "0");
}

/** "2026-12-03 17:08:29 UTC" for epoch ms; "" when not a finite number. */
export function utcText(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return "";
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${date} ${time} UTC`;
}

/** Epoch ms from a number or a date string, else null. */
export function toMs(value) {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string" || value === "") return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** The browser's IANA zone, or undefined (Intl then uses its own default). */
export function browserZone() {
  try {
    const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
    return typeof zone === "string" && zone !== "" ? zone : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A formatter bound to a clock, a locale ("en" / "zh", or any tag starting with them) and an
 * IANA zone (default: the browser's).
 */
export function createTime({ now = () => Date.now(), locale = "en", timeZone } = {}) {
  const lang = localeOf(locale);
  const words = WORDS[lang];
  const zone = timeZone ?? browserZone();
  const parts = new Intl.DateTimeFormat(lang === "zh" ? "zh-CN" : "en-GB", {
    timeZone: zone,
    year: "numeric",
    month: lang === "zh" ? "numeric" : "short",
    day: "numeric",
    weekday: "short",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });

  const numericMonth = new Intl.DateTimeFormat("en-GB", { timeZone: zone, month: "numeric" });

  function fields(ms) {
    const date = new Date(ms);
    const out = {};
    for (const part of parts.formatToParts(date)) out[part.type] = part.value;
    out.monthNumber = Number(numericMonth.format(date));
    // Day arithmetic on the local calendar date, whatever the zone's offset.
    out.dayNumber = Math.round(
      Date.UTC(Number(out.year), out.monthNumber - 1, Number(out.day)) / 86_400_000,
    );
    return out;
  }

  /** "2 min", "1 h 5 min", "40 s" (zh "2 分钟"); whole units, floored; "" when invalid. */
  function duration(ms) {
    if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
    const seconds = Math.floor(Math.abs(ms) / 1000);
    const unit = (amount, name) => `${amount} ${words[name]}`;
    if (seconds < 60) return unit(seconds, "s");
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return unit(minutes, "min");
    const hours = Math.floor(minutes / 60);
    if (hours < 24) {
      const rest = minutes % 60;
      return rest === 0 ? unit(hours, "h") : `${unit(hours, "h")} ${unit(rest, "min")}`;
    }
    const days = Math.floor(hours / 24);
    const rest = hours % 24;
    return rest === 0 ? unit(days, "d") : `${unit(days, "d")} ${unit(rest, "h")}`;
  }

  /** The local wall time: "today 18:08", "Thu 3 Dec 09:00", "Thu 3 Dec 2027 09:00". */
  function absolute(ms) {
    const at = fields(ms);
    const today = fields(now());
    const clock = `${at.hour}:${at.minute}`;
    const delta = at.dayNumber - today.dayNumber;
    if (delta === 0) return `${words.today} ${clock}`;
    if (delta === 1) return `${words.tomorrow} ${clock}`;
    if (delta === -1) return `${words.yesterday} ${clock}`;
    const sameYear = at.year === today.year;
    if (lang === "zh") {
      const date = `${sameYear ? "" : `${at.year}年`}${at.monthNumber}月${at.day}日`;
      return `${date} ${at.weekday} ${clock}`;
    }
    return `${at.weekday} ${at.day} ${at.month}${sameYear ? "" : ` ${at.year}`} ${clock}`;
  }

  /** The local calendar day of `ms` as a number (equal for two instants on the same day). */
  function day(ms) {
    return fields(ms).dayNumber;
  }

  /** The local date alone: "today", "yesterday", "Thu 3 Dec" (zh "12月3日 周四"). */
  function date(ms) {
    const at = fields(ms);
    const delta = at.dayNumber - fields(now()).dayNumber;
    if (delta === 0) return words.today;
    if (delta === -1) return words.yesterday;
    if (delta === 1) return words.tomorrow;
    if (lang === "zh") return `${at.year}年${at.monthNumber}月${at.day}日 ${at.weekday}`;
    return `${at.weekday} ${at.day} ${at.month} ${at.year}`;
  }

  /** Always relative to now: "in 3 h", "2 d 4 h ago", "just now" (zh "3 小时后"); "" when invalid. */
  function relative(value) {
    const ms = toMs(value);
    if (ms === null) return "";
    const diff = ms - now();
    if (diff < 0 && -diff < JUST_NOW_MS) return words.justNow;
    if (diff >= 0) return words.future(duration(Math.max(diff, 1000)));
    return words.past(duration(diff));
  }

  /** `{text, title}`: relative within the hour, else absolute; `title` is the UTC instant. */
  function when(value) {
    const ms = toMs(value);
    if (ms === null) return { text: "", title: "" };
    const diff = ms - now();
    const text = Math.abs(diff) >= RELATIVE_WINDOW_MS ? absolute(ms) : relative(ms);
    return { text, title: utcText(ms) };
  }

  return Object.freeze({
    now,
    locale: lang,
    timeZone: zone,
    when,
    relative,
    absolute,
    duration,
    day,
    date,
    utc: utcText,
  });
}
