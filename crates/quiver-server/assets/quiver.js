// Quiver's query page: wires the vendored YASGUI editor to this server.
//
// - ui/config (JSON) tells the endpoint, whether the server takes updates (and needs the
//   update token), the store's size, reasoning, its prefixes and examples made from its own
//   classes and predicates;
// - prefixes, classes and predicates are completed from the store (ui/complete), never from
//   an outside service (YASQE's defaults ask prefix.cc and LOV);
// - the Explain tab of the results shows the plan of the last query, with estimated and
//   actual rows per step (the endpoint's `explain` parameter);
// - updates carry the token typed in the bar (Authorization: Bearer …).
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const here = (path) => new URL(path, location.href).href;
  const TOKEN_KEY = "quiver-update-token";

  function say(text, error) {
    const summary = $("summary");
    summary.textContent = text;
    if (error) summary.dataset.error = "";
    else delete summary.dataset.error;
  }

  async function loadConfig() {
    try {
      const response = await fetch("ui/config", { headers: { Accept: "application/json" } });
      if (response.ok) return await response.json();
    } catch (_) {
      /* the editor works without it */
    }
    return { endpoint: "query", prefixes: {}, examples: [], dataset: "default" };
  }

  // Completions of classes or predicates of the store for YASQE's IRI completers: full IRIs
  // starting with what is typed (YASQE expands a prefixed name before asking).
  function storeTerms(type) {
    return (_yasqe, token) => {
      const q = (token && (token.autocompletionString || token.string)) || "";
      return fetch("ui/complete?" + new URLSearchParams({ type, q }))
        .then((response) => (response.ok ? response.json() : []))
        .catch(() => []);
    };
  }

  function registerCompleters(config) {
    const Yasqe = Yasgui.Yasqe;
    const prefixes = Object.entries(config.prefixes || {}).map(([name, iri]) => name + ": <" + iri + ">");
    Yasqe.forkAutocompleter("prefixes", { name: "store-prefixes", persistenceId: null, get: () => prefixes.sort() }, false);
    Yasqe.forkAutocompleter("class", { name: "store-classes", get: storeTerms("class") }, false);
    Yasqe.forkAutocompleter("property", { name: "store-properties", get: storeTerms("property") }, false);
    return ["variables", "store-prefixes", "store-properties", "store-classes"];
  }

  // The Explain tab of the results: the plan of the query in the current tab.
  function explainPlugin(currentTab, requestHeaders, requestArgs) {
    return class Explain {
      constructor(yasr) {
        this.yasr = yasr;
        this.priority = 0;
        this.label = "Explain";
      }
      canHandleResults() {
        return true;
      }
      getIcon() {
        const icon = document.createElement("span");
        icon.textContent = "≡";
        return icon;
      }
      async draw() {
        const out = document.createElement("pre");
        out.className = "quiver-explain";
        out.textContent = "explaining…";
        this.yasr.resultsEl.appendChild(out);
        const tab = currentTab();
        const query = tab ? tab.getYasqe().getValue() : "";
        const body = new URLSearchParams({ query, explain: "true" });
        for (const arg of requestArgs()) body.append(arg.name, arg.value);
        try {
          const response = await fetch(tab ? tab.getEndpoint() : "query", {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "text/plain", ...requestHeaders() },
            body,
          });
          out.textContent = await response.text();
          if (!response.ok) out.classList.add("quiver-explain-error");
        } catch (error) {
          out.textContent = String(error);
          out.classList.add("quiver-explain-error");
        }
      }
    };
  }

  function showStore(config) {
    if (typeof config.triples !== "number") return;
    let text = config.triples.toLocaleString("en") + " triples, " + config.terms.toLocaleString("en") + " terms";
    if (config.dataset && config.dataset !== "default") text = config.dataset + ": " + text;
    $("store").textContent = text;
  }

  function showExamples(config, yasgui) {
    const select = $("examples");
    (config.examples || []).forEach((example, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = example.name;
      select.appendChild(option);
    });
    select.addEventListener("change", () => {
      const example = config.examples[Number(select.value)];
      if (!example) return;
      const tab = yasgui.getTab();
      if (tab) tab.getYasqe().setValue(example.query);
      select.value = "";
    });
  }

  async function main() {
    const config = await loadConfig();
    const endpoint = here(config.endpoint || "query");
    const autocompleters = registerCompleters(config);

    const tokenBox = $("token");
    if (config.token_required) {
      $("token-box").hidden = false;
      tokenBox.value = sessionStorage.getItem(TOKEN_KEY) || "";
      tokenBox.addEventListener("change", () => sessionStorage.setItem(TOKEN_KEY, tokenBox.value));
    }
    const reasoning = $("reasoning");
    if (config.reasoning) {
      $("reasoning-box").hidden = false;
      $("reasoning-box").title = "answers under the store's " + config.reasoning.profile + " entailment";
      reasoning.checked = !!config.reasoning.default;
    }
    const requestHeaders = () => (tokenBox.value ? { Authorization: "Bearer " + tokenBox.value } : {});
    const requestArgs = () => (config.reasoning ? [{ name: "reasoning", value: reasoning.checked ? "on" : "off" }] : []);

    // Registered before the editor starts, so that every tab's results offer it.
    let yasgui;
    Yasgui.Yasr.registerPlugin("explain", explainPlugin(() => yasgui && yasgui.getTab(), requestHeaders, requestArgs));
    yasgui = new Yasgui($("yasgui"), {
      persistenceId: "quiver-" + (config.dataset || "default"),
      copyEndpointOnNewTab: true,
      endpointCatalogueOptions: {
        getData: () => [{ endpoint }],
        keys: [],
        renderItem: (data, source) => {
          const span = document.createElement("span");
          span.textContent = data.value.endpoint;
          source.appendChild(span);
        },
      },
      // `args` stays an array: YASGUI concatenates a tab's arguments with the defaults, so a
      // function there breaks every request; the reasoning switch updates each tab's instead.
      requestConfig: { endpoint, method: "POST", headers: requestHeaders, args: requestArgs() },
      yasqe: { autocompleters, prefixCcApi: null, value: config.examples && config.examples.length ? config.examples[0].query : undefined },
      yasr: { prefixes: config.prefixes || {} },
    });

    const setArgs = () => {
      for (const id of Object.keys(yasgui._tabs)) yasgui._tabs[id].setRequestConfig({ args: requestArgs() });
    };
    reasoning.addEventListener("change", setArgs);
    yasgui.on("tabAdd", setArgs);
    setArgs();

    let started = 0;
    yasgui.on("query", () => {
      started = performance.now();
      document.body.dataset.state = "running";
      say("running…");
    });
    // YASGUI announces a response before it hands it to the results view: read it after.
    yasgui.on("queryResponse", (_yasgui, tab) => setTimeout(() => summarise(tab), 0));
    function summarise(tab) {
      const ms = (performance.now() - started).toFixed(1);
      const results = tab.getYasr().results;
      const error = results && results.getError ? results.getError() : undefined;
      if (error) {
        document.body.dataset.state = "error";
        say((error.status ? error.status + " " : "") + (error.text || error.statusText || "query failed"), true);
        return;
      }
      const bindings = results && results.getBindings ? results.getBindings() : undefined;
      const update = tab.getYasqe().getQueryMode() === "update";
      const what = update ? "update applied" : bindings ? bindings.length + (bindings.length === 1 ? " row" : " rows") : "answer";
      document.body.dataset.state = "done";
      say(what + " in " + ms + " ms");
    }
    showStore(config);
    showExamples(config, yasgui);
    window.quiver = { yasgui, config };
    document.body.dataset.state = "ready";
  }

  main();
})();
