// dsh browser client: the page state (the Session list, the open Session, the status notice,
// the actions in flight), shared by the modules that render and change it.

export const state = {
  sessions: null, // null until the first listing arrives
  sessionsError: null,
  current: null,
  notice: null, // {key, params, tone}
  busy: new Set(), // actions in flight ("create", "resume", "fork", "flush", "send")
};

export function currentSessionInfo() {
  const current = state.current;
  return current ? state.sessions?.find((s) => s.id === current.id) ?? null : null;
}
