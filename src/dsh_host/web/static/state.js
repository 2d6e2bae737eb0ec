// dsh browser client: the page state (the Session list, the open Session, the status notice,
// the actions in flight), shared by the modules that render and change it.

export const state = {
  sessions: null, // null until the first listing arrives
  sessionsError: null,
  current: null,
  notice: null, // {key, params, tone}
  busy: new Set(), // actions in flight ("create", "resume", "fork", "flush", "send", "stop")
};

export function currentSessionInfo() {
  const current = state.current;
  return current ? state.sessions?.find((s) => s.id === current.id) ?? null : null;
}

/** What a person calls a Session: its name, else "Session" and the start of its id. */
export function sessionLabel(session, translate) {
  if (typeof session?.name === "string" && session.name !== "") return session.name;
  const id = String(session?.id ?? "");
  const short = id.length > 8 ? id.slice(0, 6) : id;
  return translate ? translate("sessions.unnamed", { id: short }) : short;
}
