"""The keyless scripted assistant's language: its reading of English and Chinese messages about
reminders, and its replies in the message's language.

It owns the grammar that reads a message (:mod:`._grammar`: create, list, cancel, cancel all,
change, snooze, a confirmation, or a question back when a part cannot be read exactly), the
words the replies are said in (:mod:`._words`), and the whole-turn phrase that calls the tools
and says the outcome (:mod:`._phrases`, offered through ``dsh_scripted_phrases``;
docs/models.md, "The scripted model").

The language stands on the reminder core (the tools' answers, the reminder framings, the fold,
instants and ``at`` values) and never the other way round: no core module imports this package.
Only the plugin's top (``dsh_schedule._plugin``) wires it in, by registering :data:`PHRASES`.
"""

from ._phrases import EXAMPLES, PHRASES

__all__ = ["EXAMPLES", "PHRASES"]
