// Where the console is: the page and its filters live in the URL's hash, never the token.

/** `#sessions?kind=main` → ["sessions", URLSearchParams]; `#session/<key>` → key param. */
export function parseHash(hash, pages) {
  const text = (hash || "").replace(/^#/, "");
  const cut = text.indexOf("?");
  const path = cut < 0 ? text : text.slice(0, cut);
  const params = new URLSearchParams(cut < 0 ? "" : text.slice(cut + 1));
  const [name, ...rest] = (path || "overview").split("/");
  if (rest.length) params.set("key", decodeURIComponent(rest.join("/")));
  return [pages.includes(name) ? name : "overview", params];
}

/** Keep a page's filters in the URL (a reload keeps them) without rendering it again. */
export function setParams(name, params) {
  const query = params.toString();
  history.replaceState(null, "", `#${name}${query ? `?${query}` : ""}`);
}
