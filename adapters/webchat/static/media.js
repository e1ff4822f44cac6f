// The web chat's media (D78): what the bot sends (images, voice notes, files) and, later, what
// the user uploads. Kept out of index.html so the page's own code stays small; the page calls
// CrosstalkMedia.show(bubble, item, token) for a "media" frame or a history row's media.
(() => {
  const style = document.createElement("style");
  style.textContent = `
    .msg .media-item { display: block; max-width: 100%; margin-top: .35rem; border-radius: .4rem; }
    .msg img.media-item { max-height: 22rem; }
    .msg audio.media-item { width: 18rem; max-width: 100%; }
  `;
  document.head.appendChild(style);

  async function fetchBlob(id, token) {
    // the token goes in the header: ?token= is for the page and its socket only (D81)
    const resp = await fetch("/webchat/media/" + encodeURIComponent(id), { headers: { Authorization: "Bearer " + token } });
    if (!resp.ok) throw new Error("HTTP " + resp.status);
    return URL.createObjectURL(await resp.blob());
  }

  async function show(div, m, token) {
    div.classList.add("has-media");
    div.dataset.mediaKind = m.kind;
    try {
      const url = await fetchBlob(m.id, token);
      let el;
      if (m.kind === "image") { el = document.createElement("img"); el.src = url; el.alt = m.name; }
      else if (m.kind === "voice" || m.kind === "audio") { el = document.createElement("audio"); el.controls = true; el.src = url; }
      else if (m.kind === "video") { el = document.createElement("video"); el.controls = true; el.src = url; }
      else { el = document.createElement("a"); el.href = url; el.download = m.name; el.textContent = "📎 " + m.name; }
      el.className = "media-item";
      el.dataset.name = m.name;
      div.appendChild(el);
    } catch (e) {
      const span = document.createElement("span"); span.className = "note";
      span.textContent = "📎 " + m.name + " could not be loaded (" + e.message + ")";
      div.appendChild(span);
    }
  }

  window.CrosstalkMedia = { show };
})();
