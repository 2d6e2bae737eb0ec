// A tiny stand-in for the DOM, enough for renderers that build nodes with createElement and
// text nodes only. Setting innerHTML throws: renderers must never parse strings as HTML.

export class FakeNode {
  constructor(nodeType) {
    this.nodeType = nodeType;
    this.childNodes = [];
  }

  appendChild(child) {
    this.childNodes.push(child);
    return child;
  }

  get textContent() {
    return this.childNodes.map((child) => child.textContent).join("");
  }

  set textContent(value) {
    const text = String(value);
    this.childNodes = text === "" ? [] : [new FakeText(text)];
  }
}

export class FakeText extends FakeNode {
  constructor(data) {
    super(3);
    this.data = data;
  }

  get textContent() {
    return this.data;
  }
}

export class FakeElement extends FakeNode {
  constructor(tag) {
    super(1);
    this.tagName = tag.toUpperCase();
    this.attributes = new Map();
    this.className = "";
  }

  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }

  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null;
  }

  hasAttribute(name) {
    return this.attributes.has(name);
  }

  get children() {
    return this.childNodes.filter((child) => child.nodeType === 1);
  }

  find(tag) {
    for (const child of this.children) {
      if (child.tagName === tag.toUpperCase()) return child;
      const inner = child.find(tag);
      if (inner) return inner;
    }
    return null;
  }

  findAll(tag, out = []) {
    for (const child of this.children) {
      if (child.tagName === tag.toUpperCase()) out.push(child);
      child.findAll(tag, out);
    }
    return out;
  }

  set innerHTML(_value) {
    throw new Error("innerHTML must never be used");
  }
}

export const fakeDocument = {
  createElement: (tag) => new FakeElement(tag),
  createTextNode: (text) => new FakeText(String(text)),
};
