// Human times: relative thresholds, absolute wording per zone and locale, the UTC tooltip.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  createTime,
  JUST_NOW_MS,
  RELATIVE_WINDOW_MS,
  toMs,
  utcText,
} from "../../src/dsh_host/web/static/time.js";

const NOW = Date.parse("2026-12-03T17:00:00Z"); // a Thursday
const at = (locale, timeZone, now = NOW) => createTime({ now: () => now, locale, timeZone });

describe("relative times near now", () => {
  const en = at("en", "UTC");
  const zh = at("zh", "UTC");
  test("future within the hour counts down in whole units", () => {
    assert.equal(en.when(NOW + 9 * 60_000 + 30_000).text, "in 9 min");
    assert.equal(zh.when(NOW + 9 * 60_000).text, "9 分钟后");
    assert.equal(en.when(NOW + 40_000).text, "in 40 s");
    assert.equal(zh.when(NOW + 40_000).text, "40 秒后");
    assert.equal(en.when(NOW + 200).text, "in 1 s");
  });
  test("past within the hour; under ten seconds is just now", () => {
    assert.equal(en.when(NOW - 2 * 60_000).text, "2 min ago");
    assert.equal(zh.when(NOW - 2 * 60_000).text, "2 分钟前");
    assert.equal(en.when(NOW - (JUST_NOW_MS - 1)).text, "just now");
    assert.equal(zh.when(NOW - 1).text, "刚刚");
    assert.equal(en.when(NOW - JUST_NOW_MS).text, "10 s ago");
  });
  test("an hour away is absolute", () => {
    assert.equal(en.when(NOW + RELATIVE_WINDOW_MS - 1).text, "in 59 min");
    assert.equal(en.when(NOW + RELATIVE_WINDOW_MS).text, "today 18:00");
    assert.equal(en.when(NOW - RELATIVE_WINDOW_MS).text, "today 16:00");
  });
});

describe("absolute times in the browser's zone", () => {
  test("today, tomorrow and yesterday follow the local calendar, not UTC's", () => {
    // 17:00 UTC is 02:00 next day in Tokyo: a 23:30 UTC instant is still "today" there.
    const tokyo = at("en", "Asia/Tokyo");
    assert.equal(tokyo.when("2026-12-03T23:30:00Z").text, "today 08:30");
    assert.equal(tokyo.when("2026-12-04T15:30:00Z").text, "tomorrow 00:30");
    assert.equal(tokyo.when("2026-12-03T10:00:00Z").text, "yesterday 19:00");
    const ny = at("en", "America/New_York");
    assert.equal(ny.when("2026-12-04T04:30:00Z").text, "today 23:30");
    assert.equal(ny.when("2026-12-04T14:00:00Z").text, "tomorrow 09:00");
  });
  test("further days name the weekday and date, the year only when it differs", () => {
    const berlin = at("en", "Europe/Berlin");
    assert.equal(berlin.when("2026-12-10T08:00:00Z").text, "Thu 10 Dec 09:00");
    assert.equal(berlin.when("2027-01-10T08:00:00Z").text, "Sun 10 Jan 2027 09:00");
    const shanghai = at("zh", "Asia/Shanghai");
    assert.equal(shanghai.when("2026-12-10T01:00:00Z").text, "12月10日 周四 09:00");
    assert.equal(shanghai.when("2027-01-10T01:00:00Z").text, "2027年1月10日 周日 09:00");
    // 17:00 UTC is already 01:00 on Friday in Shanghai.
    assert.equal(shanghai.when("2026-12-04T01:00:00Z").text, "今天 09:00");
    assert.equal(shanghai.when("2026-12-05T01:00:00Z").text, "明天 09:00");
  });
  test("a daylight-saving change between now and then keeps the wall clock", () => {
    const now = Date.parse("2026-03-07T17:00:00Z"); // Saturday before the US spring change
    const ny = at("en", "America/New_York", now);
    assert.equal(ny.when("2026-03-08T13:00:00Z").text, "tomorrow 09:00");
  });
  test("any zh or en language tag picks the wording", () => {
    assert.equal(createTime({ now: () => NOW, locale: "zh-TW", timeZone: "UTC" }).locale, "zh");
    assert.equal(createTime({ now: () => NOW, locale: "fr", timeZone: "UTC" }).locale, "en");
  });
});

describe("tooltips, durations and bad input", () => {
  test("the title is the exact UTC instant", () => {
    assert.deepEqual(at("zh", "Asia/Tokyo").when("2026-12-03T17:08:29.210Z"), {
      text: "8 分钟后",
      title: "2026-12-03 17:08:29 UTC",
    });
    assert.equal(utcText(Date.parse("2027-01-02T03:04:05Z")), "2027-01-02 03:04:05 UTC");
  });
  test("durations use whole units, two at most", () => {
    const en = at("en", "UTC");
    assert.equal(en.duration(59_999), "59 s");
    assert.equal(en.duration(120_000), "2 min");
    assert.equal(en.duration(3_600_000), "1 h");
    assert.equal(en.duration(3_900_000), "1 h 5 min");
    assert.equal(en.duration(86_400_000), "1 d");
    assert.equal(en.duration(2 * 86_400_000 + 3 * 3_600_000), "2 d 3 h");
    assert.equal(at("zh", "UTC").duration(3_900_000), "1 小时 5 分钟");
    assert.equal(en.duration(Number.NaN), "");
    assert.equal(en.duration("5"), "");
  });
  test("values that are not instants give empty text and change nothing", () => {
    const en = at("en", "UTC");
    for (const bad of [null, undefined, "", "soon", Number.POSITIVE_INFINITY, {}]) {
      assert.deepEqual(en.when(bad), { text: "", title: "" });
    }
    assert.equal(utcText(Number.NaN), "");
    assert.equal(utcText(8.64e15 + 1), "");
    assert.equal(toMs(5), 5);
    assert.equal(toMs("2026-12-03T17:00:00Z"), NOW);
  });
  test("the default zone is the browser's", () => {
    const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
    assert.equal(createTime().timeZone, zone);
  });
});

describe("always relative (a board row's second time)", () => {
  const en = at("en", "UTC");
  const zh = at("zh", "UTC");
  test("reads relative at any distance, both ways", () => {
    assert.equal(en.relative(NOW + 3 * 3600_000), "in 3 h");
    assert.equal(zh.relative(NOW + 19 * 3600_000), "19 小时后");
    assert.equal(en.relative(NOW + 2 * 86_400_000 + 4 * 3600_000), "in 2 d 4 h");
    assert.equal(en.relative(NOW - 2 * 3600_000), "2 h ago");
    assert.equal(en.relative(NOW - 1), "just now");
    assert.equal(en.relative("not a time"), "");
  });
});
