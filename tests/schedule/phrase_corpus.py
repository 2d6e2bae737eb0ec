# ruff: noqa: RUF001, E501  (data: Chinese punctuation, and each question quoted whole)
"""The phrase corpus: messages people type, in English and Chinese, each with what the scripted
model's grammar must make of it, read on a fixed clock (Wednesday 2026-08-05 09:00 in
Asia/Shanghai, 01:00 UTC).

Each expectation is one of:

* ``("create", prompt, {selector: value})``: the ``schedule_create`` arguments;
* ``("ask", question)``: the question back, word for word (it names the part it could not read);
* ``("list",)``, ``("cancel", what)``, ``("cancel_all", what_or_None)``, ``("confirm", kind)``;
* ``("snooze", minutes)``: ``schedule_snooze`` of the reminder that came up last, that many
  minutes from now;
* ``None``: not about reminders (the host's help answers, in the message's language).
"""

from __future__ import annotations

from typing import Any

from dsh_hookspecs import TimeContext
from dsh_schedule import parse_instant

#: The corpus clock: 09:00 on Wednesday 5 August 2026 in Shanghai.
CLOCK = TimeContext(now_ms=parse_instant("2026-08-05T01:00:00.000Z"), time_zone="Asia/Shanghai")
SH = "Asia/Shanghai"


def at(date: str, time: str, zone: str = SH) -> dict[str, Any]:
    return {"at": {"date": date, "time": time, "time_zone": zone}}


def daily(time: str, zone: str = SH) -> dict[str, Any]:
    return {"daily": {"time": time, "time_zone": zone}}


def weekly(time: str, *days: int, zone: str = SH) -> dict[str, Any]:
    return {"weekly": {"time": time, "time_zone": zone, "weekdays": list(days)}}


def cron(expression: str, zone: str = SH) -> dict[str, Any]:
    return {"cron": {"expression": expression, "time_zone": zone}}


WORKDAYS = (1, 2, 3, 4, 5)


CORPUS: list[tuple[str, Any]] = [
    ("remind me in 10 seconds to stretch", ("create", "stretch", {"after_seconds": 10})),
    ("remind me in 10 minutes to stretch", ("create", "stretch", {"after_seconds": 600})),
    ("Remind me in 2 min drink water", ("create", "drink water", {"after_seconds": 120})),
    ("remind me in 1 h to check the log", ("create", "check the log", {"after_seconds": 3600})),
    ("remind me in 3s to x", ("create", "x", {"after_seconds": 3})),
    ("remind me in 1 hour and 30 minutes to leave", ("create", "leave", {"after_seconds": 5400})),
    ("remind me in 1 hour, 30 minutes to leave", ("create", "leave", {"after_seconds": 5400})),
    ("remind me in 1h30m to leave", ("create", "leave", {"after_seconds": 5400})),
    ("remind me in an hour and a half to leave", ("create", "leave", {"after_seconds": 5400})),
    ("remind me in half an hour to leave", ("create", "leave", {"after_seconds": 1800})),
    ("remind me in a quarter of an hour to leave", ("create", "leave", {"after_seconds": 900})),
    ("remind me in 2 and a half hours to leave", ("create", "leave", {"after_seconds": 9000})),
    ("remind me in 2 hours and a half to leave", ("create", "leave", {"after_seconds": 9000})),
    ("remind me in an hour to stretch", ("create", "stretch", {"after_seconds": 3600})),
    ("remind me in a minute to breathe", ("create", "breathe", {"after_seconds": 60})),
    (
        "remind me in 90 minutes to move the car",
        ("create", "move the car", {"after_seconds": 5400}),
    ),
    ("remind me in 1.5 hours to leave", ("create", "leave", {"after_seconds": 5400})),
    (
        "remind me in two hours to call the bank",
        ("create", "call the bank", {"after_seconds": 7200}),
    ),
    (
        "remind me in twenty minutes to check the rice",
        ("create", "check the rice", {"after_seconds": 1200}),
    ),
    (
        "remind me in a couple of hours to water the garden",
        ("create", "water the garden", {"after_seconds": 7200}),
    ),
    ("remind me in 3 days to pay rent", ("create", "pay rent", {"after_seconds": 259200})),
    (
        "remind me in a week to renew the parking permit",
        ("create", "renew the parking permit", {"after_seconds": 604800}),
    ),
    (
        "remind me in 45 secs to flip the pancake",
        ("create", "flip the pancake", {"after_seconds": 45}),
    ),
    ("remind me to stretch in 10 minutes", ("create", "stretch", {"after_seconds": 600})),
    (
        "Remind me to check in on Sam in 2 hours.",
        ("create", "check in on Sam", {"after_seconds": 7200}),
    ),
    ("remind me to drink water in 30s", ("create", "drink water", {"after_seconds": 30})),
    ("remind me to call mom in 1 hour", ("create", "call mom", {"after_seconds": 3600})),
    ("remind me to leave in 1 hour and 30 minutes", ("create", "leave", {"after_seconds": 5400})),
    ("remind me to leave in an hour and a half!", ("create", "leave", {"after_seconds": 5400})),
    (
        "in 10 minutes remind me to check the oven",
        ("create", "check the oven", {"after_seconds": 600}),
    ),
    (
        "In 5 minutes, remind me to take the tea out",
        ("create", "take the tea out", {"after_seconds": 300}),
    ),
    ("in an hour remind me to stand up", ("create", "stand up", {"after_seconds": 3600})),
    ("30 minutes from now remind me to stretch", ("create", "stretch", {"after_seconds": 1800})),
    ("remind me 10 minutes from now to stretch", ("create", "stretch", {"after_seconds": 600})),
    ("remind me to call mom at 5pm", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    ("remind me to call mom at 5 pm.", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    ("remind me at 5pm to call mom", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    ("remind me at 17:00 to call mom", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    (
        "remind me at 18:30 to join the call",
        ("create", "join the call", at("2026-08-05", "18:30:00")),
    ),
    ("remind me at 8:30pm to eat", ("create", "eat", at("2026-08-05", "20:30:00"))),
    ("remind me at 9:15am to stand up", ("create", "stand up", at("2026-08-05", "09:15:00"))),
    ("remind me at noon to eat lunch", ("create", "eat lunch", at("2026-08-05", "12:00:00"))),
    ("remind me at midnight to sleep", ("create", "sleep", at("2026-08-06", "00:00:00"))),
    # tomorrow's midnight may start tomorrow (tonight's) or end it: both are named, and each
    # answer the question suggests reads as the instant it names
    (
        "remind me tomorrow at midnight to take out the bins",
        (
            "ask",
            'By "tomorrow at midnight" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "remind me tomorrow midnight to take out the bins",
        (
            "ask",
            'By "tomorrow midnight" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "remind me at midnight tomorrow to take out the bins",
        (
            "ask",
            'By "at midnight tomorrow" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "remind me to take out the bins tomorrow at midnight",
        (
            "ask",
            'By "tomorrow at midnight" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "tomorrow at midnight remind me to take out the bins",
        (
            "ask",
            'By "tomorrow at midnight" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "remind me tomorrow night at midnight to take out the bins",
        (
            "ask",
            'By "tomorrow night at midnight" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "remind me tomorrow night at 12 to take out the bins",
        (
            "ask",
            'By "tomorrow night at 12" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "remind me tmrw at midnight to take out the bins",
        (
            "ask",
            'By "tmrw at midnight" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "remind me on August 6 at 00:00 to take out the bins",
        ("create", "take out the bins", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me on August 7 at 00:00 to take out the bins",
        ("create", "take out the bins", at("2026-08-07", "00:00:00")),
    ),
    # the coming midnight, the one that ends today, as "at midnight" alone
    (
        "remind me tonight at midnight to take out the bins",
        ("create", "take out the bins", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me at midnight tonight to take out the bins",
        ("create", "take out the bins", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me today at midnight to take out the bins",
        ("create", "take out the bins", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me tonight at 12 to take out the bins",
        ("create", "take out the bins", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me tomorrow at 00:00 to take out the bins",
        ("create", "take out the bins", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me at 9am UTC to stand up",
        ("create", "stand up", at("2026-08-05", "09:00:00", "UTC")),
    ),
    (
        "remind me at 18:30 Europe/Paris to join the call",
        ("create", "join the call", at("2026-08-05", "18:30:00", "Europe/Paris")),
    ),
    (
        "remind me at 7:00 America/New_York to run",
        ("create", "run", at("2026-08-05", "07:00:00", "America/New_York")),
    ),
    (
        "remind me to take my pills at 10pm",
        ("create", "take my pills", at("2026-08-05", "22:00:00")),
    ),
    (
        "remind me to take my pills at 22:00 please",
        ("create", "take my pills", at("2026-08-05", "22:00:00")),
    ),
    ("remind me tomorrow at 9am to call mom", ("create", "call mom", at("2026-08-06", "09:00:00"))),
    (
        "remind me tomorrow at 21:00 to lock the door",
        ("create", "lock the door", at("2026-08-06", "21:00:00")),
    ),
    (
        "remind me tomorrow morning to water the plants",
        ("create", "water the plants", at("2026-08-06", "09:00:00")),
    ),
    (
        "remind me tomorrow afternoon to go to the bank",
        ("create", "go to the bank", at("2026-08-06", "15:00:00")),
    ),
    (
        "remind me tomorrow evening to call grandma",
        ("create", "call grandma", at("2026-08-06", "18:00:00")),
    ),
    (
        "remind me tomorrow night to set the alarm",
        ("create", "set the alarm", at("2026-08-06", "20:00:00")),
    ),
    ("remind me tonight to call dad", ("create", "call dad", at("2026-08-05", "20:00:00"))),
    ("remind me tonight at 8pm to call dad", ("create", "call dad", at("2026-08-05", "20:00:00"))),
    ("remind me tonight at 8 to call dad", ("create", "call dad", at("2026-08-05", "20:00:00"))),
    ("remind me this evening to read", ("create", "read", at("2026-08-05", "18:00:00"))),
    (
        "remind me this afternoon at 3 to pick up the kids",
        ("create", "pick up the kids", at("2026-08-05", "15:00:00")),
    ),
    ("remind me in the morning to buy milk", ("create", "buy milk", at("2026-08-06", "09:00:00"))),
    (
        "remind me in the afternoon to go for a run",
        ("create", "go for a run", at("2026-08-05", "15:00:00")),
    ),
    ("remind me to call dad tonight", ("create", "call dad", at("2026-08-05", "20:00:00"))),
    (
        "remind me to water the plants tomorrow morning",
        ("create", "water the plants", at("2026-08-06", "09:00:00")),
    ),
    ("remind me to call mom tomorrow at 9am", ("create", "call mom", at("2026-08-06", "09:00:00"))),
    (
        "remind me to submit the report on friday at 3pm",
        ("create", "submit the report", at("2026-08-07", "15:00:00")),
    ),
    (
        "remind me on Friday at 3pm to submit the report",
        ("create", "submit the report", at("2026-08-07", "15:00:00")),
    ),
    (
        "remind me next monday at 10am to book the dentist",
        ("create", "book the dentist", at("2026-08-10", "10:00:00")),
    ),
    (
        "remind me on august 7 at 9am to send the card",
        ("create", "send the card", at("2026-08-07", "09:00:00")),
    ),
    (
        "remind me on 7 august at 9am to send the card",
        ("create", "send the card", at("2026-08-07", "09:00:00")),
    ),
    (
        "remind me the day after tomorrow at 8am to pack",
        ("create", "pack", at("2026-08-07", "08:00:00")),
    ),
    ("remind me tomorrow 9am to call mom", ("create", "call mom", at("2026-08-06", "09:00:00"))),
    ("remind me at 9am tomorrow to call mom", ("create", "call mom", at("2026-08-06", "09:00:00"))),
    (
        "please remind me in 5 minutes to check the door",
        ("create", "check the door", {"after_seconds": 300}),
    ),
    (
        "can you remind me in 5 minutes to check the door",
        ("create", "check the door", {"after_seconds": 300}),
    ),
    ("hey, remind me to stretch in 10 minutes", ("create", "stretch", {"after_seconds": 600})),
    ("set a reminder in 10 minutes to stretch", ("create", "stretch", {"after_seconds": 600})),
    (
        "remind me about the meeting in 15 minutes",
        ("create", "the meeting", {"after_seconds": 900}),
    ),
    (
        "remind me that the pizza is ready in 12 minutes",
        ("create", "the pizza is ready", {"after_seconds": 720}),
    ),
    (
        'remind me in 10 minutes: "take the cake out"',
        ("create", "take the cake out", {"after_seconds": 600}),
    ),
    (
        "every 30 minutes remind me to drink water",
        ("create", "drink water", {"every_seconds": 1800}),
    ),
    ("Every 2 hours, remind me to stand up.", ("create", "stand up", {"every_seconds": 7200})),
    ("every 1 h remind me to x", ("create", "x", {"every_seconds": 3600})),
    (
        "every hour remind me to look away from the screen",
        ("create", "look away from the screen", {"every_seconds": 3600}),
    ),
    ("remind me every 10 minutes to stretch", ("create", "stretch", {"every_seconds": 600})),
    ("remind me every 3 hours to eat", ("create", "eat", {"every_seconds": 10800})),
    ("remind me every hour to drink water", ("create", "drink water", {"every_seconds": 3600})),
    (
        "remind me every 45 minutes to walk around",
        ("create", "walk around", {"every_seconds": 2700}),
    ),
    ("remind me every day to take vitamins", ("create", "take vitamins", {"every_seconds": 86400})),
    ("remind me hourly to stretch", ("create", "stretch", {"every_seconds": 3600})),
    (
        "remind me to drink water every 30 minutes",
        ("create", "drink water", {"every_seconds": 1800}),
    ),
    (
        "remind me every day at 9am to take vitamins",
        ("create", "take vitamins", daily("09:00:00")),
    ),
    ("remind me every morning to meditate", ("create", "meditate", daily("09:00:00"))),
    (
        "remind me every monday to take out the trash",
        ("ask", 'What time every monday? For example "every monday at 9am".'),
    ),
    (
        "remind me at 9 to call mom",
        ("ask", 'At 9 in the morning or in the evening? Say "9am" or "9pm".'),
    ),
    (
        "remind me at 5 to call mom",
        ("ask", 'At 5 in the morning or in the evening? Say "5am" or "5pm".'),
    ),
    (
        "remind me in 1 hour plus 30 minutes to leave",
        (
            "ask",
            'I understood "in 1 hour" but not "plus 30 minutes". When should I remind you? For example "in 1 hour and 30 minutes".',
        ),
    ),
    (
        "remind me in 1 hour and thirty-ish minutes to leave",
        (
            "ask",
            'I understood "in 1 hour" but not "and thirty-ish minutes". When should I remind you? For example "in 1 hour and 30 minutes".',
        ),
    ),
    (
        "remind me to stretch",
        (
            "ask",
            'When should I remind you about "stretch"? For example "in 10 minutes", "at 5pm" or "tomorrow morning".',
        ),
    ),
    (
        "remind me to stretch sometime",
        ("ask", 'I could not read "sometime" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "remind me to stretch later",
        ("ask", 'I could not read "later" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "remind me to stretch soon",
        ("ask", 'I could not read "soon" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "remind me to stretch in a while",
        ("ask", 'I could not read "in a while" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "remind me tomorrow to call mom",
        ("ask", 'What time tomorrow? For example "tomorrow at 9am".'),
    ),
    (
        "remind me on friday to submit the report",
        ("ask", 'What time on friday? For example "on friday at 9am".'),
    ),
    ("remind me at 18:30", ("ask", "What should I remind you of at 18:30?")),
    ("remind me in 10 minutes", ("ask", "What should I remind you of in 10 minutes?")),
    ("remind me tomorrow at 9am", ("ask", "What should I remind you of tomorrow at 9am?")),
    (
        "remind me",
        (
            "ask",
            'What should I remind you of, and when? For example "remind me in 10 minutes to stretch".',
        ),
    ),
    (
        "remind me tomorrow at 13pm to call mom",
        ("ask", 'I could not read "13pm" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "remind me at 25:00 to sleep",
        ("ask", 'I could not read "25:00" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "remind me at 9:75 to run",
        ("ask", 'I could not read "9:75" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "remind me in 10 minutes at 5pm to stretch",
        ("ask", "That names more than one time (in 10 minutes / at 5pm). Which one do you mean?"),
    ),
    (
        "remind me in 10 minutes to stretch in 20 minutes",
        (
            "ask",
            "That names more than one time (in 10 minutes / in 20 minutes). Which one do you mean?",
        ),
    ),
    (
        "remind me at 5pm to call mom at 6pm",
        ("ask", "That names more than one time (at 5pm / at 6pm). Which one do you mean?"),
    ),
    ("list reminders", ("list",)),
    ("list my reminders", ("list",)),
    ("show my reminders", ("list",)),
    ("Show my reminders.", ("list",)),
    ("what reminders do I have?", ("list",)),
    ("What reminders do I have", ("list",)),
    ("what are my reminders?", ("list",)),
    ("do I have any reminders?", ("list",)),
    ("my reminders", ("list",)),
    ("any reminders?", ("list",)),
    ("cancel the oven reminder", ("cancel", "oven")),
    ("cancel the stretch reminder", ("cancel", "stretch")),
    ("delete the reminder to call mom", ("cancel", "call mom")),
    ("remove the drink water reminder", ("cancel", "drink water")),
    ('cancel "take the cake out"', ("cancel", "take the cake out")),
    ("delete schedule-1", ("cancel", "schedule-1")),
    ("cancel reminder schedule-9!", ("cancel", "schedule-9")),
    (
        "cancel it",
        ("ask", 'Which reminder? Say what it says, for example "cancel the stretch reminder".'),
    ),
    ("cancel all my reminders", ("cancel_all", None)),
    ("cancel all reminders", ("cancel_all", None)),
    ("delete all my reminders", ("cancel_all", None)),
    ("clear my reminders", ("cancel_all", None)),
    ("cancel all the oven reminders", ("cancel_all", "oven")),
    ("cancel everything", ("cancel_all", None)),
    ("yes, cancel all", ("confirm", "cancel_all")),
    ("Yes cancel all", ("confirm", "cancel_all")),
    ("yes, add it", ("confirm", "add")),
    ("ok, add another", ("confirm", "add")),
    ("提醒我10分钟后伸展一下", ("create", "伸展一下", {"after_seconds": 600})),
    ("提醒我10秒后喝水", ("create", "喝水", {"after_seconds": 10})),
    ("提醒我10秒钟以后喝水。", ("create", "喝水", {"after_seconds": 10})),
    ("请提醒我在 2 小时之后 开会", ("create", "开会", {"after_seconds": 7200})),
    ("30秒后提醒我喝水！", ("create", "喝水", {"after_seconds": 30})),
    ("请在1个小时后提醒我打电话", ("create", "打电话", {"after_seconds": 3600})),
    ("5分后提醒我看一下部署", ("create", "看一下部署", {"after_seconds": 300})),
    ("提醒我半小时后出门", ("create", "出门", {"after_seconds": 1800})),
    ("提醒我一个半小时后出门", ("create", "出门", {"after_seconds": 5400})),
    ("提醒我1小时30分钟后出门", ("create", "出门", {"after_seconds": 5400})),
    ("提醒我十分钟后喝水", ("create", "喝水", {"after_seconds": 600})),
    ("提醒我两个小时后开会", ("create", "开会", {"after_seconds": 7200})),
    ("提醒我一刻钟后关火", ("create", "关火", {"after_seconds": 900})),
    ("提醒我3天后交房租", ("create", "交房租", {"after_seconds": 259200})),
    ("半小时后提醒我出门", ("create", "出门", {"after_seconds": 1800})),
    ("一个小时后提醒我吃药", ("create", "吃药", {"after_seconds": 3600})),
    ("二十分钟后提醒我看看锅", ("create", "看看锅", {"after_seconds": 1200})),
    ("明天早上9点提醒我开会", ("create", "开会", at("2026-08-06", "09:00:00"))),
    ("明天早上提醒我浇花", ("create", "浇花", at("2026-08-06", "09:00:00"))),
    ("明天上午10点提醒我去银行", ("create", "去银行", at("2026-08-06", "10:00:00"))),
    ("明天下午3点提醒我开会", ("create", "开会", at("2026-08-06", "15:00:00"))),
    ("明天晚上8点提醒我给妈妈打电话", ("create", "给妈妈打电话", at("2026-08-06", "20:00:00"))),
    ("下午3点提醒我取快递", ("create", "取快递", at("2026-08-05", "15:00:00"))),
    ("晚上8点提醒我给爸爸打电话", ("create", "给爸爸打电话", at("2026-08-05", "20:00:00"))),
    ("今晚8点提醒我给爸爸打电话", ("create", "给爸爸打电话", at("2026-08-05", "20:00:00"))),
    ("今晚提醒我倒垃圾", ("create", "倒垃圾", at("2026-08-05", "20:00:00"))),
    ("中午12点提醒我吃饭", ("create", "吃饭", at("2026-08-05", "12:00:00"))),
    ("中午1点提醒我午休", ("create", "午休", at("2026-08-05", "13:00:00"))),
    ("下午3点半提醒我开会", ("create", "开会", at("2026-08-05", "15:30:00"))),
    ("上午9点15分提醒我打卡", ("create", "打卡", at("2026-08-05", "09:15:00"))),
    ("明天 09:00 提醒我开会", ("create", "开会", at("2026-08-06", "09:00:00"))),
    ("17:30提醒我下班", ("create", "下班", at("2026-08-05", "17:30:00"))),
    ("提醒我明天早上9点开会", ("create", "开会", at("2026-08-06", "09:00:00"))),
    ("提醒我下午3点取快递", ("create", "取快递", at("2026-08-05", "15:00:00"))),
    ("提醒我今晚8点给爸爸打电话", ("create", "给爸爸打电话", at("2026-08-05", "20:00:00"))),
    ("周五下午3点提醒我交报告", ("create", "交报告", at("2026-08-07", "15:00:00"))),
    ("下周一上午10点提醒我开会", ("create", "开会", at("2026-08-10", "10:00:00"))),
    ("8月7日下午3点提醒我交报告", ("create", "交报告", at("2026-08-07", "15:00:00"))),
    ("后天早上8点提醒我出发", ("create", "出发", at("2026-08-07", "08:00:00"))),
    ("每30分钟提醒我喝水", ("create", "喝水", {"every_seconds": 1800})),
    ("每隔2小时提醒我站起来活动", ("create", "站起来活动", {"every_seconds": 7200})),
    ("每小时提醒我喝水", ("create", "喝水", {"every_seconds": 3600})),
    ("提醒我每30分钟喝一次水", ("create", "喝一次水", {"every_seconds": 1800})),
    ("每天早上8点提醒我吃药", ("create", "吃药", daily("08:00:00"))),
    ("提醒我喝水", ("ask", "什么时候提醒你“喝水”？例如“10分钟后”“下午3点”或“明天早上9点”。")),
    ("提醒我明天开会", ("ask", "明天几点？例如“明天早上9点”。")),
    ("9点提醒我开会", ("ask", "9点是上午还是晚上？请说“上午9点”或“晚上9点”。")),
    (
        "10分钟提醒我喝水",
        ("ask", "我看不懂“10分钟”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    ("提醒我", ("ask", "要提醒你什么，什么时候？例如“10分钟后提醒我伸展一下”。")),
    (
        "提醒我一会儿喝水",
        ("ask", "我看不懂“一会儿”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    (
        "25点提醒我睡觉",
        ("ask", "我看不懂“25点”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    ("我有哪些提醒？", ("list",)),
    ("我有哪些提醒", ("list",)),
    ("我有什么提醒", ("list",)),
    ("列出所有提醒", ("list",)),
    ("查看我的提醒", ("list",)),
    ("我的提醒", ("list",)),
    ("取消喝水的提醒", ("cancel", "喝水")),
    ("取消提醒：喝水", ("cancel", "喝水")),
    ("删除开会的提醒", ("cancel", "开会")),
    ("取消所有提醒", ("cancel_all", None)),
    ("删除全部提醒", ("cancel_all", None)),
    ("清空提醒", ("cancel_all", None)),
    ("取消所有喝水的提醒", ("cancel_all", "喝水")),
    ("是的，全部取消", ("confirm", "cancel_all")),
    ("好，全部取消", ("confirm", "cancel_all")),
    ("是的，添加", ("confirm", "add")),
    ("hello", None),
    ("what's the weather like?", None),
    ("你好", None),
    ("今天天气怎么样", None),
    ("please tell me a joke", None),
    (
        "提醒我小时后喝水",
        ("ask", "我看不懂“小时后”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    (
        "2月30日下午3点提醒我交报告",
        ("ask", "我看不懂“2月30日”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    ("1月5日上午9点提醒我交报告", ("create", "交报告", at("2027-01-05", "09:00:00"))),
    (
        "remind me in 0 minutes to x",
        (
            "ask",
            'I could not read "in 0 minutes" as a time. Try "5pm", "17:30" or "in 10 minutes".',
        ),
    ),
    (
        "remind me in the car to call mom",
        (
            "ask",
            'When should I remind you about "in the car to call mom"? For example "in 10 minutes", "at 5pm" or "tomorrow morning".',
        ),
    ),
    (
        "remind me soon to stretch",
        ("ask", 'I could not read "soon" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "sometime tomorrow remind me to call mom",
        (
            "ask",
            'I could not read "sometime tomorrow" as a time. Try "5pm", "17:30" or "in 10 minutes".',
        ),
    ),
    ("每个小时提醒我喝水", ("create", "喝水", {"every_seconds": 3600})),
    ("明早8点提醒我跑步", ("create", "跑步", at("2026-08-06", "08:00:00"))),
    ("明晚提醒我倒垃圾", ("create", "倒垃圾", at("2026-08-06", "20:00:00"))),
    ("下午3点提醒我4点开会", ("ask", "这里有不止一个时间（下午 / 3点 / 4点）。你指的是哪一个？")),
    ("喂，提醒我10分钟后喝水", ("create", "喝水", {"after_seconds": 600})),
    (
        "一会儿提醒我喝水",
        ("ask", "我看不懂“一会儿”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    ("明天早上9点提醒我", ("ask", "明天早上9点要提醒你什么？")),
    (
        "提醒我喝水10分钟",
        ("ask", "我看不懂“10分钟”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    ("下周一提醒我开会", ("ask", "下周一几点？例如“下周一早上9点”。")),
    (
        "remind me at 9am to call mom in 1 hour",
        ("ask", "That names more than one time (at 9am / in 1 hour). Which one do you mean?"),
    ),
    # Routines at a time of day: daily, weekly, and days of the month (a cron rule), in the
    # browser's zone unless the message names one.
    (
        "every weekday at 9 remind me to stand up",
        ("create", "stand up", weekly("09:00:00", *WORKDAYS)),
    ),
    (
        "every monday at 10am remind me to plan the week",
        ("create", "plan the week", weekly("10:00:00", 1)),
    ),
    ("every day at 22:00 remind me to sleep", ("create", "sleep", daily("22:00:00"))),
    (
        "on the 1st of every month at 9 remind me to pay rent",
        ("create", "pay rent", cron("0 9 1 * *")),
    ),
    (
        "remind me to stand up every weekday at 9am",
        ("create", "stand up", weekly("09:00:00", *WORKDAYS)),
    ),
    (
        "remind me every weekday at 9am Europe/Paris to stand up",
        ("create", "stand up", weekly("09:00:00", *WORKDAYS, zone="Europe/Paris")),
    ),
    (
        "every weekday at 9 Paris time remind me to stand up",
        ("create", "stand up", weekly("09:00:00", *WORKDAYS, zone="Europe/Paris")),
    ),
    (
        "every day at 7:30am New York time remind me to run",
        ("create", "run", daily("07:30:00", "America/New_York")),
    ),
    (
        "every mon, wed and fri at 7am remind me to go running",
        ("create", "go running", weekly("07:00:00", 1, 3, 5)),
    ),
    (
        "remind me on mondays and thursdays at 6pm to water the plants",
        ("create", "water the plants", weekly("18:00:00", 1, 4)),
    ),
    (
        "remind me mon-fri at 8:30 to check the mail",
        ("create", "check the mail", weekly("08:30:00", *WORKDAYS)),
    ),
    (
        "remind me monday to friday at 17:45 to log my hours",
        ("create", "log my hours", weekly("17:45:00", *WORKDAYS)),
    ),
    (
        "every weekend at 10am remind me to clean the flat",
        ("create", "clean the flat", weekly("10:00:00", 6, 7)),
    ),
    (
        "remind me on weekends at 11am to call grandma",
        ("create", "call grandma", weekly("11:00:00", 6, 7)),
    ),
    ("every sunday at 8pm remind me to plan", ("create", "plan", weekly("20:00:00", 7))),
    (
        "remind me every friday at noon to order lunch",
        ("create", "order lunch", weekly("12:00:00", 5)),
    ),
    ("remind me daily at 8am to take my pills", ("create", "take my pills", daily("08:00:00"))),
    (
        "remind me every evening at 9 to write in my journal",
        ("create", "write in my journal", daily("21:00:00")),
    ),
    ("every night at 11pm remind me to sleep", ("create", "sleep", daily("23:00:00"))),
    ("remind me every day at midnight to back up", ("create", "back up", daily("00:00:00"))),
    (
        "remind me on the 1st and 15th of every month at 9am to pay the bills",
        ("create", "pay the bills", cron("0 9 1,15 * *")),
    ),
    (
        "every month on the 28th at 18:00 remind me to send the invoice",
        ("create", "send the invoice", cron("0 18 28 * *")),
    ),
    (
        "remind me every weekday to stand up",
        ("ask", 'What time every weekday? For example "every weekday at 9am".'),
    ),
    (
        "every weekday at 5 remind me to go home",
        ("ask", 'At 5 in the morning or in the evening? Say "5am" or "5pm".'),
    ),
    (
        "remind me on the 32nd of every month at 9am to pay the bills",
        (
            "ask",
            'I could not read "on the 32nd of every month" as a time. Try "5pm", "17:30" or "in 10 minutes".',
        ),
    ),
    (
        "every 2 hours at 9am remind me to stretch",
        (
            "ask",
            'I can repeat a reminder every so many minutes or hours, or at a time of day ("every day at 9am", "every Monday at 10am"), but not both at once. Which do you mean?',
        ),
    ),
    (
        "every monday tomorrow at 9am remind me to call",
        (
            "ask",
            "That names more than one time (every monday / tomorrow / at 9am). Which one do you mean?",
        ),
    ),
    ("每天晚上10点提醒我睡觉", ("create", "睡觉", daily("22:00:00"))),
    ("每周一上午10点提醒我开周会", ("create", "开周会", weekly("10:00:00", 1))),
    ("每个工作日早上9点提醒我站会", ("create", "站会", weekly("09:00:00", *WORKDAYS))),
    ("工作日早上8点半提醒我打卡", ("create", "打卡", weekly("08:30:00", *WORKDAYS))),
    ("周一到周五早上8点提醒我打卡", ("create", "打卡", weekly("08:00:00", *WORKDAYS))),
    ("每周一三五晚上7点提醒我跑步", ("create", "跑步", weekly("19:00:00", 1, 3, 5))),
    ("每周二和周四下午4点提醒我接孩子", ("create", "接孩子", weekly("16:00:00", 2, 4))),
    ("每个周末上午10点提醒我打扫房间", ("create", "打扫房间", weekly("10:00:00", 6, 7))),
    ("每周日晚上8点提醒我做计划", ("create", "做计划", weekly("20:00:00", 7))),
    ("每月1号上午9点提醒我交房租", ("create", "交房租", cron("0 9 1 * *"))),
    ("每个月15号晚上8点提醒我还信用卡", ("create", "还信用卡", cron("0 20 15 * *"))),
    ("每晚10点提醒我睡觉", ("create", "睡觉", daily("22:00:00"))),
    ("每天9点提醒我喝水", ("create", "喝水", daily("09:00:00"))),
    ("提醒我每天晚上9点吃药", ("create", "吃药", daily("21:00:00"))),
    ("每天中午12点提醒我吃饭", ("create", "吃饭", daily("12:00:00"))),
    ("巴黎时间每天早上9点提醒我开会", ("create", "开会", daily("09:00:00", "Europe/Paris"))),
    ("工作日每天9点提醒我打卡", ("create", "打卡", weekly("09:00:00", *WORKDAYS))),
    ("每周一至周五9点提醒我站会", ("create", "站会", weekly("09:00:00", *WORKDAYS))),
    ("每个月1号提醒我交房租", ("ask", "每个月1号几点？例如“每个月1号早上9点”。")),
    ("每周一提醒我开会", ("ask", "每周一几点？例如“每周一早上9点”。")),
    ("每天5点提醒我喝水", ("ask", "5点是上午还是晚上？请说“上午5点”或“晚上5点”。")),
    ("每周一次提醒我打扫", ("create", "打扫", {"every_seconds": 604800})),
    ("每天提醒我喝水", ("create", "喝水", {"every_seconds": 86400})),
    (
        "every weekday at 9am remind me to stand up (Europe/Paris)",
        ("create", "stand up", weekly("09:00:00", *WORKDAYS, zone="Europe/Paris")),
    ),
    (
        "every day at 9am remind me to stand up (UTC)",
        ("create", "stand up", daily("09:00:00", "UTC")),
    ),
    (
        "remind me at 9am to check the time in UTC",
        ("create", "check the time in UTC", at("2026-08-06", "09:00:00")),
    ),
    (
        "remind me to stand up (Europe/Paris)",
        (
            "ask",
            'When should I remind you about "stand up"? For example "in 10 minutes", "at 5pm" or "tomorrow morning".',
        ),
    ),
    (
        "every monday every tuesday at 9am remind me to call",
        (
            "ask",
            "That names more than one time (every monday / every tuesday / at 9am). Which one do you mean?",
        ),
    ),
    (
        "every 2 hours daily remind me to stretch",
        ("ask", "That names more than one time (every 2 hours / daily). Which one do you mean?"),
    ),
    (
        "每月32号上午9点提醒我交房租",
        ("ask", "我看不懂“每月32号”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    (
        "every 2 hours every day remind me to stretch",
        (
            "ask",
            "That names more than one time (every 2 hours / every day). Which one do you mean?",
        ),
    ),
    ("每天每2小时提醒我喝水", ("ask", "这里有不止一个时间（每天 / 每2小时）。你指的是哪一个？")),
    # What new users type: the phrasings first tried against the scripted assistant, and their
    # everyday variations (listing, cancelling, snoozing, times of day, typos).
    (
        "set a reminder for 3:45pm to pick up the kids",
        ("create", "pick up the kids", at("2026-08-05", "15:45:00")),
    ),
    (
        "set a reminder for tomorrow at 9am to call mom",
        ("create", "call mom", at("2026-08-06", "09:00:00")),
    ),
    (
        "set a reminder for 6pm to cook dinner",
        ("create", "cook dinner", at("2026-08-05", "18:00:00")),
    ),
    ("create a reminder to call mom at 5pm", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    ("add a reminder to buy milk at 6pm", ("create", "buy milk", at("2026-08-05", "18:00:00"))),
    ("reminder at 5pm to call mom", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    ("reminder: call mom at 5pm", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    ("set an alarm for 7am", ("ask", "What should I remind you of at 7am?")),
    ("anything scheduled?", ("list",)),
    ("what's scheduled?", ("list",)),
    ("what do I have scheduled?", ("list",)),
    ("what's coming up?", ("list",)),
    ("is there anything coming up?", ("list",)),
    ("can you list my reminders?", ("list",)),
    ("could you show me my reminders please", ("list",)),
    ("what reminders are there?", ("list",)),
    ("do I have reminders", ("list",)),
    ("are there any reminders?", ("list",)),
    ("view my reminders", ("list",)),
    ("check my reminders", ("list",)),
    ("show all reminders", ("list",)),
    ("list all my reminders", ("list",)),
    ("upcoming reminders", ("list",)),
    ("wake me up at 6:15 tomorrow", ("create", "wake up", at("2026-08-06", "06:15:00"))),
    ("wake me up at 7am", ("create", "wake up", at("2026-08-06", "07:00:00"))),
    (
        "wake me up tomorrow at 6:30am to catch the train",
        ("create", "catch the train", at("2026-08-06", "06:30:00")),
    ),
    (
        "wake me up",
        (
            "ask",
            'What should I remind you of, and when? For example "remind me in 10 minutes to stretch".',
        ),
    ),
    (
        "remind me in a fortnight to water the cactus",
        ("create", "water the cactus", {"after_seconds": 1209600}),
    ),
    (
        "remind me every fortnight to water the cactus",
        ("create", "water the cactus", {"every_seconds": 1209600}),
    ),
    (
        "remind me in 2 weeks to renew my passport",
        ("create", "renew my passport", {"after_seconds": 1209600}),
    ),
    (
        "remind me in 10 days to check the mail",
        ("create", "check the mail", {"after_seconds": 864000}),
    ),
    (
        "remind me in 3 hours to take my medicine",
        ("create", "take my medicine", {"after_seconds": 10800}),
    ),
    ("remind me in an hour and 15 minutes to leave", ("create", "leave", {"after_seconds": 4500})),
    ("remind me in 45 minutes to leave", ("create", "leave", {"after_seconds": 2700})),
    (
        "remind me in half an hour to check the laundry",
        ("create", "check the laundry", {"after_seconds": 1800}),
    ),
    (
        "remind me in 30 mins to check the laundry",
        ("create", "check the laundry", {"after_seconds": 1800}),
    ),
    (
        "remind me in 30min to check the laundry",
        ("create", "check the laundry", {"after_seconds": 1800}),
    ),
    (
        "remind me to take the pizza out in 15 min",
        ("create", "take the pizza out", {"after_seconds": 900}),
    ),
    ("remind me in 1 hr to leave", ("create", "leave", {"after_seconds": 3600})),
    ("remind me in 2hrs to leave", ("create", "leave", {"after_seconds": 7200})),
    ("remind me in 5 minutes", ("ask", "What should I remind you of in 5 minutes?")),
    (
        "remind me at noon tomorrow to call the vet",
        ("create", "call the vet", at("2026-08-06", "12:00:00")),
    ),
    (
        "remind me tomorrow at noon to pay the bill",
        ("create", "pay the bill", at("2026-08-06", "12:00:00")),
    ),
    (
        "remind me tonight at 9 to take out the trash",
        ("create", "take out the trash", at("2026-08-05", "21:00:00")),
    ),
    (
        "remind me tonight at 12 to lock the door",
        ("create", "lock the door", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me this evening at 7 to call grandma",
        ("create", "call grandma", at("2026-08-05", "19:00:00")),
    ),
    (
        "remind me this evening to water the plants",
        ("create", "water the plants", at("2026-08-05", "18:00:00")),
    ),
    (
        "remind me at midnight to turn off the heater",
        ("create", "turn off the heater", at("2026-08-06", "00:00:00")),
    ),
    (
        "remind me at 3 pm to call the dentist",
        ("create", "call the dentist", at("2026-08-05", "15:00:00")),
    ),
    (
        "remind me at 3:45 pm to pick up the kids",
        ("create", "pick up the kids", at("2026-08-05", "15:45:00")),
    ),
    (
        "remind me at 07:30 to leave for work",
        ("create", "leave for work", at("2026-08-06", "07:30:00")),
    ),
    (
        "remind me at 11:59pm to submit the form",
        ("create", "submit the form", at("2026-08-05", "23:59:00")),
    ),
    (
        "remind me at 6 in the evening to cook dinner",
        ("create", "cook dinner", at("2026-08-05", "18:00:00")),
    ),
    (
        "remind me tomorrow at 6 in the morning to run",
        ("create", "run", at("2026-08-06", "06:00:00")),
    ),
    (
        "remind me at 5pm tomorrow to call mom",
        ("create", "call mom", at("2026-08-06", "17:00:00")),
    ),
    (
        "remind me on saturday at 10am to mow the lawn",
        ("create", "mow the lawn", at("2026-08-08", "10:00:00")),
    ),
    (
        "remind me this saturday at 10am to mow the lawn",
        ("create", "mow the lawn", at("2026-08-08", "10:00:00")),
    ),
    (
        "remind me on sunday morning to call mom",
        ("create", "call mom", at("2026-08-09", "09:00:00")),
    ),
    (
        "remind me thursday at 2pm to send the report",
        ("create", "send the report", at("2026-08-06", "14:00:00")),
    ),
    (
        "remind me to call mom on friday at 6pm",
        ("create", "call mom", at("2026-08-07", "18:00:00")),
    ),
    (
        "remind me next wednesday at 10am to water the lawn",
        ("create", "water the lawn", at("2026-08-12", "10:00:00")),
    ),
    (
        "remind me next friday at 3pm to submit the report",
        (
            "ask",
            'By "next friday" do you mean Friday, August 7 or Friday, August 14? Say "on August 7" or "on August 14".',
        ),
    ),
    (
        "remind me next saturday morning to go hiking",
        (
            "ask",
            'By "next saturday" do you mean Saturday, August 8 or Saturday, August 15? Say "on August 8" or "on August 15".',
        ),
    ),
    (
        "remind me on August 14 at 3pm to submit the report",
        ("create", "submit the report", at("2026-08-14", "15:00:00")),
    ),
    (
        "remind me next week to book flights",
        (
            "ask",
            'When should I remind you about "next week to book flights"? For example "in 10 minutes", "at 5pm" or "tomorrow morning".',
        ),
    ),
    (
        "remind me every weekday at 8am to check email",
        ("create", "check email", weekly("08:00:00", *WORKDAYS)),
    ),
    ("remind me every 15 minutes to stretch", ("create", "stretch", {"every_seconds": 900})),
    (
        "every day at 8pm remind me to take my meds",
        ("create", "take my meds", daily("20:00:00")),
    ),
    (
        "remind me every sunday at 7pm to plan the week",
        ("create", "plan the week", weekly("19:00:00", 7)),
    ),
    ("remind me at 9pm every day to floss", ("create", "floss", daily("21:00:00"))),
    ("remind me daily at 9pm to floss", ("create", "floss", daily("21:00:00"))),
    ("remind me to floss every night at 10pm", ("create", "floss", daily("22:00:00"))),
    (
        "remind me to pay rent on the 1st of every month at 9am",
        ("create", "pay rent", cron("0 9 1 * *")),
    ),
    (
        "remind me every other day to water the plants",
        (
            "ask",
            'I could not read "every other day" as a time. Try "5pm", "17:30" or "in 10 minutes".',
        ),
    ),
    # typos people make
    ("remnd me in 10 minutes to stretch", ("create", "stretch", {"after_seconds": 600})),
    ("remid me at 5pm to call mom", ("create", "call mom", at("2026-08-05", "17:00:00"))),
    ("remind me in 10 minuts to stretch", ("create", "stretch", {"after_seconds": 600})),
    (
        "remind me in 20 mintues to check the oven",
        ("create", "check the oven", {"after_seconds": 1200}),
    ),
    (
        "remind me tommorow at 9am to call mom",
        ("create", "call mom", at("2026-08-06", "09:00:00")),
    ),
    ("remind me tomorow at 9am to call mom", ("create", "call mom", at("2026-08-06", "09:00:00"))),
    ("remind me tmrw at 9am to call mom", ("create", "call mom", at("2026-08-06", "09:00:00"))),
    ("remind me tonite to call dad", ("create", "call dad", at("2026-08-05", "20:00:00"))),
    (
        "pls remind me in 5 min to check the door",
        ("create", "check the door", {"after_seconds": 300}),
    ),
    # cancelling
    ("stop reminding me to drink water", ("cancel", "drink water")),
    (
        "stop reminding me",
        ("ask", 'Which reminder? Say what it says, for example "cancel the stretch reminder".'),
    ),
    ("don't remind me about the meeting anymore", ("cancel", "the meeting")),
    ("delete the laundry reminder", ("cancel", "laundry")),
    ("remove my reminder to call mom", ("cancel", "call mom")),
    ("cancel the reminder about the dentist", ("cancel", "the dentist")),
    ("delete everything", ("cancel_all", None)),
    ("remove all reminders", ("cancel_all", None)),
    # snoozing the reminder that just came up
    ("snooze 10 minutes", ("snooze", 10)),
    ("snooze for 10 minutes", ("snooze", 10)),
    ("Snooze 5 min", ("snooze", 5)),
    ("snooze it for an hour", ("snooze", 60)),
    ("snooze for half an hour", ("snooze", 30)),
    ("remind me again in 10 minutes", ("snooze", 10)),
    ("remind me again in an hour", ("snooze", 60)),
    ("remind me again in 2 hours please", ("snooze", 120)),
    (
        "snooze",
        ("ask", 'For how long? Say "snooze 10 minutes" or "snooze 1 hour" (at most a week).'),
    ),
    (
        "snooze it",
        ("ask", 'For how long? Say "snooze 10 minutes" or "snooze 1 hour" (at most a week).'),
    ),
    (
        "remind me again later",
        ("ask", 'For how long? Say "snooze 10 minutes" or "snooze 1 hour" (at most a week).'),
    ),
    (
        "snooze 30 seconds",
        ("ask", 'For how long? Say "snooze 10 minutes" or "snooze 1 hour" (at most a week).'),
    ),
    (
        "snooze for 2 weeks",
        ("ask", 'For how long? Say "snooze 10 minutes" or "snooze 1 hour" (at most a week).'),
    ),
    (
        "remind me later to call mom",
        ("ask", 'I could not read "later" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    ("what's the time?", None),
    ("thanks!", None),
    # Chinese
    ("我都有什么提醒", ("list",)),
    ("我都有哪些提醒？", ("list",)),
    ("我设了哪些提醒", ("list",)),
    ("我现在有几个提醒", ("list",)),
    ("我的提醒有哪些", ("list",)),
    ("看看我的提醒", ("list",)),
    ("显示提醒", ("list",)),
    ("提醒列表", ("list",)),
    ("我有没有提醒", ("list",)),
    ("有什么提醒", ("list",)),
    ("把喝水的提醒删掉", ("cancel", "喝水")),
    ("把开会的提醒取消", ("cancel", "开会")),
    ("别提醒我喝水了", ("cancel", "喝水")),
    ("别提醒我了", ("ask", "取消哪个提醒？请说出它的内容，例如“取消伸展的提醒”。")),
    ("不用再提醒我喝水了", ("cancel", "喝水")),
    ("取消明天开会的提醒", ("cancel", "明天开会")),
    ("全部取消", ("cancel_all", None)),
    ("删除所有的提醒", ("cancel_all", None)),
    ("10分钟后再提醒我", ("snooze", 10)),
    ("半小时后再提醒我", ("snooze", 30)),
    ("一小时后再提醒我一次", ("snooze", 60)),
    ("推迟10分钟", ("snooze", 10)),
    ("推迟半小时", ("snooze", 30)),
    (
        "稍后再提醒我",
        ("ask", "要推迟多久？请说“10分钟后再提醒我”或“1小时后再提醒我”（最多一周）。"),
    ),
    (
        "过一会儿再提醒我",
        ("ask", "要推迟多久？请说“10分钟后再提醒我”或“1小时后再提醒我”（最多一周）。"),
    ),
    ("明早6点叫醒我", ("create", "起床", at("2026-08-06", "06:00:00"))),
    ("明天早上6点叫我起床", ("create", "起床", at("2026-08-06", "06:00:00"))),
    ("明早提醒我买牛奶", ("create", "买牛奶", at("2026-08-06", "09:00:00"))),
    ("明早7点半提醒我跑步", ("create", "跑步", at("2026-08-06", "07:30:00"))),
    ("明天中午提醒我订餐", ("create", "订餐", at("2026-08-06", "12:00:00"))),
    ("今天下午提醒我取快递", ("create", "取快递", at("2026-08-05", "15:00:00"))),
    ("今天晚上提醒我洗衣服", ("create", "洗衣服", at("2026-08-05", "18:00:00"))),
    ("今晚十一点提醒我关灯", ("create", "关灯", at("2026-08-05", "23:00:00"))),
    ("晚上12点提醒我关灯", ("create", "关灯", at("2026-08-06", "00:00:00"))),
    ("午夜提醒我关灯", ("create", "关灯", at("2026-08-06", "00:00:00"))),
    # 明天午夜, 明晚12点: the midnight that starts tomorrow or the one that ends it; both named
    (
        "明天午夜提醒我关灯",
        (
            "ask",
            "“明天午夜”是指8月6日（周四）的开始（今晚），还是它的结束（8月7日周五0点）？请说“8月6日0点”或“8月7日0点”。",
        ),
    ),
    (
        "明晚12点提醒我关灯",
        (
            "ask",
            "“明晚12点”是指8月6日（周四）的开始（今晚），还是它的结束（8月7日周五0点）？请说“8月6日0点”或“8月7日0点”。",
        ),
    ),
    (
        "明天晚上12点提醒我关灯",
        (
            "ask",
            "“明天晚上12点”是指8月6日（周四）的开始（今晚），还是它的结束（8月7日周五0点）？请说“8月6日0点”或“8月7日0点”。",
        ),
    ),
    (
        "提醒我明天午夜关灯",
        (
            "ask",
            "“明天午夜”是指8月6日（周四）的开始（今晚），还是它的结束（8月7日周五0点）？请说“8月6日0点”或“8月7日0点”。",
        ),
    ),
    (
        "明晚午夜提醒我关灯",
        (
            "ask",
            "“明晚午夜”是指8月6日（周四）的开始（今晚），还是它的结束（8月7日周五0点）？请说“8月6日0点”或“8月7日0点”。",
        ),
    ),
    (
        "明天半夜12点提醒我关灯",
        (
            "ask",
            "“明天半夜12点”是指8月6日（周四）的开始（今晚），还是它的结束（8月7日周五0点）？请说“8月6日0点”或“8月7日0点”。",
        ),
    ),
    ("8月6日0点提醒我关灯", ("create", "关灯", at("2026-08-06", "00:00:00"))),
    ("8月7日0点提醒我关灯", ("create", "关灯", at("2026-08-07", "00:00:00"))),
    ("今晚12点提醒我关灯", ("create", "关灯", at("2026-08-06", "00:00:00"))),
    ("今晚午夜提醒我关灯", ("create", "关灯", at("2026-08-06", "00:00:00"))),
    ("今天午夜提醒我关灯", ("create", "关灯", at("2026-08-06", "00:00:00"))),
    ("明天0点提醒我关灯", ("create", "关灯", at("2026-08-06", "00:00:00"))),
    ("每天晚上12点提醒我关灯", ("create", "关灯", daily("00:00:00"))),
    ("凌晨3点提醒我看球", ("create", "看球", at("2026-08-06", "03:00:00"))),
    ("凌晨提醒我看球", ("ask", "凌晨几点？例如“凌晨5点”。")),
    ("下周二上午10点提醒我开会", ("create", "开会", at("2026-08-11", "10:00:00"))),
    ("下周五下午3点提醒我交报告", ("create", "交报告", at("2026-08-14", "15:00:00"))),
    ("下周五提醒我交报告", ("ask", "下周五几点？例如“下周五早上9点”。")),
    ("后天下午2点提醒我去医院", ("create", "去医院", at("2026-08-07", "14:00:00"))),
    ("大后天上午9点提醒我续签", ("create", "续签", at("2026-08-08", "09:00:00"))),
    ("周六上午10点提醒我打扫", ("create", "打扫", at("2026-08-08", "10:00:00"))),
    ("星期三下午3点提醒我开会", ("create", "开会", at("2026-08-12", "15:00:00"))),
    ("礼拜天晚上8点提醒我给妈妈打电话", ("create", "给妈妈打电话", at("2026-08-09", "20:00:00"))),
    ("半小时后提醒我关火", ("create", "关火", {"after_seconds": 1800})),
    ("一小时后提醒我出门", ("create", "出门", {"after_seconds": 3600})),
    ("提醒我五分钟后关火", ("create", "关火", {"after_seconds": 300})),
    ("三分钟后提醒我", ("ask", "三分钟后要提醒你什么？")),
    ("提醒我两周后续签证", ("create", "续签证", {"after_seconds": 1209600})),
    ("一个星期后提醒我交报告", ("create", "交报告", {"after_seconds": 604800})),
    ("下个月1号上午9点提醒我交房租", ("create", "交房租", at("2026-09-01", "09:00:00"))),
    ("下个月1号提醒我交房租", ("ask", "下个月1号几点？例如“下个月1号早上9点”。")),
    ("每个工作日早上9点提醒我打卡", ("create", "打卡", weekly("09:00:00", *WORKDAYS))),
    ("每个工作日下午6点提醒我写日报", ("create", "写日报", weekly("18:00:00", *WORKDAYS))),
    ("每周五下午5点提醒我写周报", ("create", "写周报", weekly("17:00:00", 5))),
    ("每天早上7点半提醒我吃早饭", ("create", "吃早饭", daily("07:30:00"))),
    ("每隔15分钟提醒我看一下锅", ("create", "看一下锅", {"every_seconds": 900})),
    ("每两小时提醒我喝水", ("create", "喝水", {"every_seconds": 7200})),
    ("晚上十点提醒我睡觉", ("create", "睡觉", at("2026-08-05", "22:00:00"))),
    ("晚上10点半提醒我睡觉", ("create", "睡觉", at("2026-08-05", "22:30:00"))),
    ("明天下午三点半提醒我开会", ("create", "开会", at("2026-08-06", "15:30:00"))),
    ("12点提醒我吃饭", ("ask", "12点是上午还是晚上？请说“上午12点”或“晚上12点”。")),
    ("别忘了提醒我10分钟后喝水", ("create", "喝水", {"after_seconds": 600})),
]


#: Days of the week that read differently from other days, each on its own clock (09:00 in
#: Shanghai): "next tuesday" said on a Monday may mean tomorrow or the Tuesday after, so it asks,
#: naming both dates; the dates it names then read as they say. "tomorrow at midnight" names the
#: dates of that clock's tomorrow.
MONDAY = TimeContext(now_ms=parse_instant("2026-08-10T01:00:00.000Z"), time_zone=SH)
SUNDAY = TimeContext(now_ms=parse_instant("2026-08-09T01:00:00.000Z"), time_zone=SH)
ON_OTHER_DAYS: list[tuple[TimeContext, str, Any]] = [
    (
        MONDAY,
        "remind me next tuesday morning to call the plumber",
        (
            "ask",
            'By "next tuesday" do you mean Tuesday, August 11 or Tuesday, August 18? Say "on August 11" or "on August 18".',
        ),
    ),
    (
        MONDAY,
        "remind me on August 11 in the morning to call the plumber",
        ("create", "call the plumber", at("2026-08-11", "09:00:00")),
    ),
    (
        MONDAY,
        "remind me on August 18 in the morning to call the plumber",
        ("create", "call the plumber", at("2026-08-18", "09:00:00")),
    ),
    (
        MONDAY,
        "remind me this tuesday morning to call the plumber",
        ("create", "call the plumber", at("2026-08-11", "09:00:00")),
    ),
    (
        MONDAY,
        "remind me tuesday morning to call the plumber",
        ("create", "call the plumber", at("2026-08-11", "09:00:00")),
    ),
    (
        MONDAY,
        "remind me next monday at 9am to plan the week",
        ("create", "plan the week", at("2026-08-17", "09:00:00")),
    ),
    (
        MONDAY,
        "remind me next sunday at 10am to call grandma",
        (
            "ask",
            'By "next sunday" do you mean Sunday, August 16 or Sunday, August 23? Say "on August 16" or "on August 23".',
        ),
    ),
    (
        MONDAY,
        "move the dentist reminder to next friday at 3pm",
        (
            "ask",
            'By "next friday" do you mean Friday, August 14 or Friday, August 21? Say "on August 14" or "on August 21".',
        ),
    ),
    (
        MONDAY,
        "remind me tomorrow at midnight to submit the form",
        (
            "ask",
            'By "tomorrow at midnight" do you mean the start of Tuesday, August 11 (tonight) or the end of it (00:00 on Wednesday, August 12)? Say "on August 11 at 00:00" or "on August 12 at 00:00".',
        ),
    ),
    (
        MONDAY,
        "remind me on August 11 at 00:00 to submit the form",
        ("create", "submit the form", at("2026-08-11", "00:00:00")),
    ),
    (
        MONDAY,
        "remind me on August 12 at 00:00 to submit the form",
        ("create", "submit the form", at("2026-08-12", "00:00:00")),
    ),
    (
        MONDAY,
        "明晚12点提醒我交表",
        (
            "ask",
            "“明晚12点”是指8月11日（周二）的开始（今晚），还是它的结束（8月12日周三0点）？请说“8月11日0点”或“8月12日0点”。",
        ),
    ),
    (MONDAY, "8月11日0点提醒我交表", ("create", "交表", at("2026-08-11", "00:00:00"))),
    (MONDAY, "8月12日0点提醒我交表", ("create", "交表", at("2026-08-12", "00:00:00"))),
    (MONDAY, "下周二上午10点提醒我开会", ("create", "开会", at("2026-08-18", "10:00:00"))),
    (MONDAY, "周二上午10点提醒我开会", ("create", "开会", at("2026-08-11", "10:00:00"))),
    (MONDAY, "明天上午10点提醒我开会", ("create", "开会", at("2026-08-11", "10:00:00"))),
    (
        SUNDAY,
        "remind me next monday at 9am to plan the week",
        (
            "ask",
            'By "next monday" do you mean Monday, August 10 or Monday, August 17? Say "on August 10" or "on August 17".',
        ),
    ),
    (
        SUNDAY,
        "remind me next sunday at 9am to call grandma",
        ("create", "call grandma", at("2026-08-16", "09:00:00")),
    ),
    (SUNDAY, "下周一上午9点提醒我开周会", ("create", "开周会", at("2026-08-10", "09:00:00"))),
]

#: Changing a reminder, on the same clock: ``("update", what, change)``, where ``what`` names the
#: reminder as typed (its id, its text, or its time), and ``change`` is what the grammar read:
#: ``at`` (the clocks ``what`` can mean), then one of ``times`` (a new time of day that keeps the
#: reminder's kind; two when an hour came without am or pm), ``time_zone``, a whole new
#: ``schedule_create`` selector, or ``text``. The scripted model finds the reminder with
#: ``schedule_list`` and calls ``schedule_update`` (``test_conversation.py``).
UPDATES: list[tuple[str, Any]] = [
    ("move schedule-2 to 10:00", ("update", "schedule-2", {"times": ("10:00:00",)})),
    (
        "move the stretch reminder to tomorrow at midnight",
        (
            "ask",
            'By "tomorrow at midnight" do you mean the start of Thursday, August 6 (tonight) or the end of it (00:00 on Friday, August 7)? Say "on August 6 at 00:00" or "on August 7 at 00:00".',
        ),
    ),
    (
        "move the stretch reminder to August 7 at 00:00",
        ("update", "stretch", at("2026-08-07", "00:00:00")),
    ),
    (
        "把伸展的提醒改到明天午夜",
        (
            "ask",
            "“明天午夜”是指8月6日（周四）的开始（今晚），还是它的结束（8月7日周五0点）？请说“8月6日0点”或“8月7日0点”。",
        ),
    ),
    ("把伸展的提醒改到8月7日0点", ("update", "伸展", at("2026-08-07", "00:00:00"))),
    (
        "move my 9am reminder to 10",
        ("update", "9am", {"at": ("09:00",), "times": ("10:00:00", "22:00:00")}),
    ),
    ("change the stand up reminder to 10am", ("update", "stand up", {"times": ("10:00:00",)})),
    ("rename schedule-2 to stretch", ("update", "schedule-2", {"text": "stretch"})),
    (
        "rename the stand up reminder as daily stand-up",
        ("update", "stand up", {"text": "daily stand-up"}),
    ),
    ("change the reminder to stand up to 10am", ("update", "stand up", {"times": ("10:00:00",)})),
    (
        "change the stand up reminder to monday to friday at 10",
        ("update", "stand up", weekly("10:00:00", *WORKDAYS)),
    ),
    (
        "reschedule the dentist reminder for friday at 3pm",
        ("update", "dentist", at("2026-08-07", "15:00:00")),
    ),
    (
        "move the call mom reminder to tomorrow at 10am",
        ("update", "call mom", at("2026-08-06", "10:00:00")),
    ),
    (
        "change the stand up reminder to every weekday at 8:30",
        ("update", "stand up", weekly("08:30:00", *WORKDAYS)),
    ),
    (
        "move the stand up reminder to 10:00 Europe/Paris",
        ("update", "stand up", {"times": ("10:00:00",), "time_zone": "Europe/Paris"}),
    ),
    (
        "move the stand up reminder to 10 in the evening",
        ("update", "stand up", {"times": ("22:00:00",)}),
    ),
    ("move the stretch reminder to in 2 hours", ("update", "stretch", {"after_seconds": 7200})),
    (
        "change the time of the stand up reminder to 9:30",
        ("update", "stand up", {"times": ("09:30:00",)}),
    ),
    (
        "change the text of the stand up reminder to stretch",
        ("update", "stand up", {"text": "stretch"}),
    ),
    (
        "change the stand up reminder to daily stand-up",
        ("update", "stand up", {"text": "daily stand-up"}),
    ),
    (
        "Please move the 'stand up' reminder to 11am.",
        ("update", "stand up", {"times": ("11:00:00",)}),
    ),
    (
        "move the stand up reminder to 25:00",
        ("ask", 'I could not read "25:00" as a time. Try "5pm", "17:30" or "in 10 minutes".'),
    ),
    (
        "change the stand up reminder to sometime later",
        (
            "ask",
            'I could not read "sometime later" as a time. Try "5pm", "17:30" or "in 10 minutes".',
        ),
    ),
    (
        "move it to 10",
        (
            "ask",
            'Which reminder? Say what it says, for example "move the stretch reminder to 10:00".',
        ),
    ),
    ("move the car to the garage", None),
    ("change the oil to synthetic", None),
    ("把站会提醒改成10点", ("update", "站会", {"times": ("10:00:00", "22:00:00")})),
    ("把站会提醒改到明天上午10点", ("update", "站会", at("2026-08-06", "10:00:00"))),
    ("把站会的提醒改成每周一上午10点", ("update", "站会", weekly("10:00:00", 1))),
    ("站会提醒改到10点半", ("update", "站会", {"times": ("10:30:00", "22:30:00")})),
    (
        "把9点的提醒改到10点",
        ("update", "9点", {"at": ("09:00", "21:00"), "times": ("10:00:00", "22:00:00")}),
    ),
    (
        "把早上9点的提醒改到上午10点",
        ("update", "早上9点", {"at": ("09:00",), "times": ("10:00:00",)}),
    ),
    ("把站会提醒改名为早会", ("update", "站会", {"text": "早会"})),
    ("把站会提醒改成开早会", ("update", "站会", {"text": "开早会"})),
    ("把站会提醒的内容改成开早会", ("update", "站会", {"text": "开早会"})),
    ("把schedule-2改到晚上8点", ("update", "schedule-2", {"times": ("20:00:00",)})),
    ("把站会提醒改到下周一上午10点", ("update", "站会", at("2026-08-10", "10:00:00"))),
    ("把喝水提醒改成每天晚上9点", ("update", "喝水", daily("21:00:00"))),
    (
        "把站会提醒改到某个时候",
        ("ask", "我看不懂“某个时候”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    ("把提醒改到10点", ("ask", "改哪个提醒？请说出它的内容，例如“把伸展的提醒改到10点”。")),
    ("把衣服改成红色", None),
    (
        "把站会提醒改到10点70分",
        ("ask", "我看不懂“10点70分”这个时间。请换一种说法，例如“下午3点”或“10分钟后”。"),
    ),
    # a time that is no time names the reminder by its text
    ("move my 25:00 reminder to 10am", ("update", "25:00", {"times": ("10:00:00",)})),
    (
        "move the stand up reminder to tomorrow",
        ("ask", 'What time tomorrow? For example "tomorrow at 9am".'),
    ),
    (
        "rename it to stretch",
        (
            "ask",
            'Which reminder? Say what it says, for example "move the stretch reminder to 10:00".',
        ),
    ),
    (
        "rename it",
        (
            "ask",
            'Which reminder? Say what it says, for example "move the stretch reminder to 10:00".',
        ),
    ),
    ('rename the stand up reminder to ""', ("ask", 'What should "stand up" say instead?')),
]
