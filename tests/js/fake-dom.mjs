// A small stand-in for the DOM: renderers build nodes with createElement and text nodes only
// (setting innerHTML throws: nothing may parse a string as HTML), and fake-browser.mjs boots
// the whole app on the same classes.

export class FakeNode {
  constructor(nodeType) {
    this.nodeType = nodeType;
    this.parentNode = null;
  }

  get nextSibling() {
    const siblings = this.parentNode?.childNodes ?? [];
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }

  remove() {
    if (this.parentNode === null) return;
    const siblings = this.parentNode.childNodes;
    siblings.splice(siblings.indexOf(this), 1);
    this.parentNode = null;
  }

  replaceWith(node) {
    const parent = this.parentNode;
    parent.insertBefore(node, this);
    this.remove();
  }
}

export class FakeText extends FakeNode {
  constructor(data) {
    super(3);
    this.data = String(data);
  }

  get textContent() {
    return this.data;
  }
}

class ClassList {
  constructor(element) {
    this.element = element;
  }

  get values() {
    return this.element.className.split(/\s+/).filter(Boolean);
  }

  contains(name) {
    return this.values.includes(name);
  }

  add(name) {
    if (!this.contains(name)) this.element.className = [...this.values, name].join(" ");
  }

  remove(name) {
    this.element.className = this.values.filter((v) => v !== name).join(" ");
  }

  toggle(name, force = !this.contains(name)) {
    if (force) this.add(name);
    else this.remove(name);
    return force;
  }
}

export class FakeElement extends FakeNode {
  constructor(tag) {
    super(1);
    this.tagName = tag.toUpperCase();
    this.childNodes = [];
    this.attributes = new Map();
    this.listeners = new Map();
    this.className = "";
    this.classList = new ClassList(this);
    this.style = { setProperty() {} };
    this.hidden = false;
    this.disabled = false;
    this.open = false;
    this.value = "";
    this.scrollTop = 0;
    this.scrollHeight = 0;
    this.clientHeight = 0;
  }

  // ---- tree
  _adopt(nodes) {
    return nodes.map((node) => {
      const child = typeof node === "string" ? new FakeText(node) : node;
      child.remove();
      child.parentNode = this;
      return child;
    });
  }

  appendChild(child) {
    this.childNodes.push(...this._adopt([child]));
    return child;
  }

  insertBefore(child, reference) {
    if (reference === null || reference === undefined) return this.appendChild(child);
    const [adopted] = this._adopt([child]);
    this.childNodes.splice(this.childNodes.indexOf(reference), 0, adopted);
    return child;
  }

  prepend(...nodes) {
    this.childNodes.unshift(...this._adopt(nodes));
  }

  replaceChildren(...nodes) {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes = [];
    this.childNodes.push(...this._adopt(nodes));
  }

  get children() {
    return this.childNodes.filter((child) => child.nodeType === 1);
  }

  get childElementCount() {
    return this.children.length;
  }

  get firstChild() {
    return this.childNodes[0] ?? null;
  }

  get lastElementChild() {
    return this.children.at(-1) ?? null;
  }

  get previousElementSibling() {
    const siblings = this.parentNode?.children ?? [];
    return siblings[siblings.indexOf(this) - 1] ?? null;
  }

  get textContent() {
    return this.childNodes.map((child) => child.textContent).join("");
  }

  set textContent(value) {
    this.replaceChildren(...(value === "" ? [] : [new FakeText(value)]));
  }

  set innerHTML(_value) {
    throw new Error("innerHTML must never be used");
  }

  // ---- attributes
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }

  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null;
  }

  hasAttribute(name) {
    return this.attributes.has(name);
  }

  removeAttribute(name) {
    this.attributes.delete(name);
  }

  // ---- events
  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(listener);
  }

  dispatch(type, init = {}) {
    const event = { type, target: this, preventDefault() {}, ...init };
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }

  /** Like a user's click: a disabled button does not fire. */
  click() {
    if (!this.disabled) this.dispatch("click");
  }

  /** Like a browser: a disabled control takes no focus; the document knows what has it. */
  focus() {
    if (this.disabled || globalThis.document === undefined) return;
    globalThis.document.activeElement = this;
  }

  /** A `<dialog>`'s modal opening and closing (`close` fires its "close" event). */
  showModal() {
    this.open = true;
  }

  close() {
    this.open = false;
    this.dispatch("close");
  }

  contains(node) {
    for (let at = node; at instanceof FakeNode; at = at.parentNode) {
      if (at === this) return true;
    }
    return false;
  }

  // ---- queries
  *descendants() {
    for (const child of this.children) {
      yield child;
      yield* child.descendants();
    }
  }

  querySelectorAll(selector) {
    const tests = parseSelectorList(selector);
    return [...this.descendants()].filter((el) => tests.some((test) => test(el)));
  }

  /** Whether this element matches a list of compound selectors (tag, .class, [attr="v"]). */
  matches(selector) {
    return parseSelectorList(selector).some((test) => test(this));
  }

  closest(selector) {
    const tests = parseSelectorList(selector);
    for (let node = this; node instanceof FakeElement; node = node.parentNode) {
      if (tests.some((test) => test(node))) return node;
    }
    return null;
  }

  querySelector(selector) {
    return this.querySelectorAll(selector)[0] ?? null;
  }

  /** The first descendant with this tag name, depth first. */
  find(tag) {
    return this.findAll(tag)[0] ?? null;
  }

  findAll(tag) {
    return [...this.descendants()].filter((el) => el.tagName === tag.toUpperCase());
  }
}

export const fakeDocument = {
  createElement: (tag) => new FakeElement(tag),
  createElementNS: (namespace, tag) => Object.assign(new FakeElement(tag), { namespaceURI: namespace }),
  createTextNode: (text) => new FakeText(String(text)),
};

/** Compound selectors separated by commas: `tag.class[attr][attr="value"]`, nothing else. */
function parseSelectorList(selector) {
  return selector.split(",").map((part) => {
    const text = part.trim();
    const match = /^([a-z][a-z0-9]*)?((?:\.[\w-]+)*)((?:\[[\w-]+(?:=(?:"[^"]*"|[\w-]+))?\])*)$/i.exec(
      text,
    );
    if (match === null || text === "") throw new Error(`fake DOM: unsupported selector ${selector}`);
    const [, tag, classes, attributes] = match;
    const classNames = classes.split(".").filter(Boolean);
    const attrs = [...attributes.matchAll(/\[([\w-]+)(?:=(?:"([^"]*)"|([\w-]+)))?\]/g)].map(
      ([, name, quoted, bare]) => [name, quoted ?? bare],
    );
    return (el) =>
      (tag === undefined || el.tagName === tag.toUpperCase()) &&
      classNames.every((name) => el.classList.contains(name)) &&
      attrs.every(
        ([name, value]) =>
          el.hasAttribute(name) && (value === undefined || el.getAttribute(name) === value),
      );
  });
}
