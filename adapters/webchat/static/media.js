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

  // ---- uploads (D154): the 📎 button, drag and drop, paste, and 🎤 voice recording ----------
  let pending = [], limitsOf = () => null;
  const chips = document.createElement("div"); chips.id = "uploads";
  function renderChips() {
    chips.textContent = "";
    pending.forEach((p, i) => {
      const chip = document.createElement("span"); chip.className = "chip";
      chip.textContent = (p.voice ? "🎤 " : "📎 ") + p.name + " ";
      const x = document.createElement("button"); x.type = "button"; x.textContent = "×"; x.title = "Remove";
      x.addEventListener("click", () => { pending.splice(i, 1); renderChips(); });
      chip.appendChild(x); chips.appendChild(chip);
    });
    chips.hidden = !pending.length;
  }
  function base64(buffer) {
    const bytes = new Uint8Array(buffer); let s = "";
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  }
  function human(n) { return n < 1024 ? n + " B" : n < 1048576 ? Math.round(n / 1024) + " KB" : (n / 1048576).toFixed(1) + " MB"; }
  async function addFile(file, voice = false) {
    const limits = limitsOf() || { maxImageBytes: 10485760, maxUploadBytes: 26214400 };
    const limit = (file.type || "").startsWith("image/") ? limits.maxImageBytes : limits.maxUploadBytes;
    if (file.size > limit) {
      const chip = document.createElement("span"); chip.className = "chip refused";
      chip.textContent = "📎 " + file.name + " (" + human(file.size) + ") is over the limit of " + human(limit);
      chips.appendChild(chip); chips.hidden = false; return;
    }
    pending.push({ name: file.name || "file", mime: file.type || "application/octet-stream", data: base64(await file.arrayBuffer()), voice });
    renderChips();
  }
  const addAll = (files) => Promise.all([...files].map(f => addFile(f)));

  function install(form, input, limits) {
    limitsOf = limits;
    style.textContent += `
      #uploads { display: flex; flex-wrap: wrap; gap: .35rem; padding: .35rem .75rem 0; background: var(--panel); }
      #uploads .chip { font-size: .8rem; padding: .15rem .45rem; border: 1px solid var(--border); border-radius: 1rem; }
      #uploads .chip.refused { border-color: #dc2626; }
      #uploads .chip button { padding: 0 .3rem; background: none; color: inherit; }
      #record.on { background: #dc2626; }
    `;
    const pick = document.createElement("input"); pick.type = "file"; pick.multiple = true; pick.id = "file"; pick.hidden = true;
    const attach = document.createElement("button"); attach.type = "button"; attach.id = "attach"; attach.textContent = "📎"; attach.title = "Attach files";
    const mic = document.createElement("button"); mic.type = "button"; mic.id = "record"; mic.textContent = "🎤"; mic.title = "Record a voice message";
    attach.addEventListener("click", () => pick.click());
    pick.addEventListener("change", async () => { await addAll(pick.files); pick.value = ""; });
    form.insertBefore(pick, input); form.insertBefore(attach, input); form.insertBefore(mic, input);
    form.parentNode.insertBefore(chips, form); chips.hidden = true;
    document.addEventListener("paste", (e) => {
      const files = e.clipboardData ? [...e.clipboardData.files] : [];
      if (files.length) { e.preventDefault(); addAll(files); }
    });
    document.addEventListener("dragover", (e) => { if (e.dataTransfer && [...e.dataTransfer.types].includes("Files")) e.preventDefault(); });
    document.addEventListener("drop", (e) => {
      const files = e.dataTransfer ? [...e.dataTransfer.files] : [];
      if (files.length) { e.preventDefault(); addAll(files); }
    });
    let recorder = null;
    mic.addEventListener("click", async () => {
      if (recorder) { recorder.stop(); return; }
      let stream;
      try { stream = await navigator.mediaDevices.getUserMedia({ audio: true }); }
      catch (e) { mic.title = "No microphone: " + e.message; return; }
      const type = ["audio/ogg;codecs=opus", "audio/webm;codecs=opus", "audio/webm"].find(t => MediaRecorder.isTypeSupported(t)) || "";
      const parts = [];
      recorder = new MediaRecorder(stream, type ? { mimeType: type } : {});
      recorder.addEventListener("dataavailable", (e) => { if (e.data.size) parts.push(e.data); });
      recorder.addEventListener("stop", async () => {
        stream.getTracks().forEach(t => t.stop()); recorder = null; mic.classList.remove("on");
        const mime = (type || "audio/webm").split(";")[0];
        const file = new File(parts, "voice." + (mime.includes("ogg") ? "ogg" : "webm"), { type: mime });
        await addFile(file, true);
        form.requestSubmit();  // a voice message is sent when the recording ends
      });
      recorder.start(); mic.classList.add("on");
    });
  }
  function count() { return pending.length; }
  function take() { const out = pending.map(({ name, mime, data, voice }) => (voice ? { name, mime, data, voice } : { name, mime, data })); pending = []; renderChips(); return out; }

  window.CrosstalkMedia = { show, install, count, take, addFile };
})();
