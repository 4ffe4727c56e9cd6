extension ViewerPage {
  /// The page's style sheet: a network panel in the manner of browser developer tools, light and dark.
  static let style = #"""
    :root { --bg: #fff; --fg: #202124; --dim: #5f6368; --line: #e0e3e7; --head: #f1f3f4; --sel: #d2e3fc;
      --hover: #f5f7fa; --grid: rgba(0,0,0,.07); --accent: #1a73e8; --odd: #fafbfc;
      --c2: #1a73e8; --w2: #34a853; --c3: #e8a200; --w3: #fbc846; --c4: #e8710a; --w4: #f6ae6b;
      --c5: #d93025; --w5: #f28b82; --cf: #9aa0a6; --wf: #c8cbcf; --throttle: #b39ddb; --queue: #dadce0;
      --dns: #00897b; --connect: #f29900; --tls: #a142f4; --retry: #e37400; --mono: ui-monospace,
      SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; color-scheme: light dark; }
    @media (prefers-color-scheme: dark) { :root { --bg: #202124; --fg: #e8eaed; --dim: #9aa0a6;
      --line: #3c4043; --head: #292a2d; --sel: #174ea6; --hover: #2d2f33; --grid: rgba(255,255,255,.08);
      --odd: #242528; --queue: #5f6368; } }
    * { box-sizing: border-box; }
    html, body { margin: 0; height: 100%; background: var(--bg); color: var(--fg);
      font: 12px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
    #app { display: flex; flex-direction: column; height: 100vh; }
    .toolbar { display: flex; align-items: center; gap: 8px; padding: 6px 10px; border-bottom: 1px solid var(--line);
      background: var(--head); flex-wrap: wrap; }
    .toolbar h1 { font-size: 13px; font-weight: 600; margin: 0 8px 0 0; white-space: nowrap; overflow: hidden;
      text-overflow: ellipsis; max-width: 48ch; }
    .toolbar h1 small { font-weight: 400; color: var(--dim); margin-left: 6px; font-size: 12px; }
    .toolbar h1 .dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; background: var(--c5);
      margin-right: 6px; box-shadow: 0 0 0 2px rgba(217,48,37,.2); vertical-align: 0; }
    #q { width: 260px; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg);
      color: var(--fg); font: inherit; }
    #q:focus { outline: 2px solid var(--accent); outline-offset: -1px; }
    .seg { display: inline-flex; border: 1px solid var(--line); border-radius: 4px; overflow: hidden; }
    .seg button { border: 0; border-right: 1px solid var(--line); background: var(--bg); color: var(--fg);
      padding: 3px 9px; font: inherit; cursor: pointer; }
    .seg button:last-child { border-right: 0; }
    .seg button.on { background: var(--accent); color: #fff; }
    select { font: inherit; padding: 3px 4px; border: 1px solid var(--line); border-radius: 4px;
      background: var(--bg); color: var(--fg); max-width: 220px; }
    .spacer { flex: 1; }
    .legend { display: flex; gap: 10px; color: var(--dim); flex-wrap: wrap; }
    .legend i { display: inline-block; width: 10px; height: 8px; border-radius: 1px; margin-right: 4px; }
    .main { flex: 1; display: flex; min-height: 0; }
    .list { flex: 1; min-width: 0; display: flex; flex-direction: column; }
    #scroller { flex: 1; overflow: auto; position: relative; outline: none; }
    .grid { display: grid; grid-template-columns: 46px minmax(150px, 2.2fr) 64px 72px minmax(90px, 1fr) 132px 66px
      minmax(220px, 3.4fr); }
    .detail-open .grid { grid-template-columns: 40px minmax(140px, 2fr) 60px 72px 0 0 62px minmax(160px, 2.2fr); }
    .detail-open .c-host, .detail-open .c-size { visibility: hidden; overflow: hidden; padding: 0; }
    .thead { position: sticky; top: 0; z-index: 2; background: var(--head); border-bottom: 1px solid var(--line);
      height: 26px; font-weight: 600; color: var(--dim); }
    .thead > div { padding: 5px 6px; white-space: nowrap; overflow: hidden; border-right: 1px solid var(--line); }
    .thead .c-wf { position: relative; padding: 0; border-right: 0; }
    .tick { position: absolute; top: 5px; font-weight: 400; font-size: 11px; color: var(--dim); padding-left: 3px;
      border-left: 1px solid var(--line); height: 20px; white-space: nowrap; }
    #body { position: relative; }
    .row { position: absolute; left: 0; right: 0; height: 24px; align-items: center; cursor: default;
      border-bottom: 1px solid var(--line); }
    .row:nth-child(odd) { background: var(--odd); }
    .row:hover { background: var(--hover); }
    .row.sel { background: var(--sel); }
    .row > div { padding: 0 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; height: 24px;
      line-height: 23px; }
    .row.child > .c-name { padding-left: 26px; color: var(--dim); }
    .c-num, .c-size, .c-time { text-align: right; font-variant-numeric: tabular-nums; color: var(--dim); }
    .c-status { font-variant-numeric: tabular-nums; font-weight: 600; }
    .st-2 { color: inherit; font-weight: 400; } .st-3 { color: var(--c3); } .st-4 { color: var(--c4); }
    .st-5 { color: var(--c5); } .st-f { color: var(--c5); }
    .row.err .c-name { color: var(--c5); }
    .caret { display: inline-block; width: 14px; color: var(--dim); cursor: pointer; user-select: none; }
    .badge { display: inline-block; font-size: 10px; line-height: 14px; padding: 0 5px; border-radius: 7px;
      margin-left: 6px; background: var(--head); border: 1px solid var(--line); color: var(--dim); }
    .badge.retry { color: var(--retry); border-color: var(--retry); }
    .badge.fail { color: var(--c5); border-color: var(--c5); max-width: 60%; overflow: hidden;
      text-overflow: ellipsis; vertical-align: bottom; }
    .c-wf { position: relative; padding: 0 !important; background-image: linear-gradient(to right, var(--grid) 1px,
      transparent 1px); background-size: var(--tick, 25%) 100%; }
    .seg-bar { position: absolute; top: 7px; height: 10px; display: flex; min-width: 2px; border-radius: 1px; }
    .seg-bar > i { display: block; height: 100%; min-width: 0; }
    .ph-throttle { background: repeating-linear-gradient(135deg, var(--throttle) 0 3px, transparent 3px 6px);
      position: absolute; top: 9px; height: 6px; }
    .ph-queue { background: var(--queue); position: absolute; top: 11px; height: 2px; }
    .ph-retry { position: absolute; top: 11px; height: 2px; border-top: 2px dashed var(--retry); }
    .ph-gap { position: absolute; top: 11px; height: 1px; background: var(--dim); opacity: .5; }
    .ph-pending { position: absolute; top: 7px; height: 10px; background: repeating-linear-gradient(135deg,
      var(--cf) 0 4px, transparent 4px 8px); }
    i.dns { background: var(--dns); } i.connect { background: var(--connect); } i.tls { background: var(--tls); }
    i.send { background: var(--dim); }
    .s2 i.wait { background: var(--w2); } .s2 i.recv { background: var(--c2); }
    .s3 i.wait { background: var(--w3); } .s3 i.recv { background: var(--c3); }
    .s4 i.wait { background: var(--w4); } .s4 i.recv { background: var(--c4); }
    .s5 i.wait { background: var(--w5); } .s5 i.recv { background: var(--c5); }
    .sf i.wait, .sf i.recv { background: var(--wf); }
    .seg-bar.sf { outline: 1px solid var(--c5); }
    .empty { padding: 40px; text-align: center; color: var(--dim); font-size: 14px; }
    .footer { border-top: 1px solid var(--line); background: var(--head); padding: 4px 10px; color: var(--dim);
      display: flex; gap: 16px; white-space: nowrap; overflow: hidden; }
    .statusbar { display: flex; flex-wrap: wrap; align-items: center; border-top: 1px solid var(--line); background: var(--head); }
    .statusbar .footer { border-top: 0; flex: 1 1 auto; }
    .statusbar .legend { padding: 4px 10px; }
    .footer b { color: var(--fg); font-weight: 600; }
    #detail { width: 42%; max-width: 720px; min-width: 340px; border-left: 1px solid var(--line); display: flex;
      flex-direction: column; min-height: 0; }
    #detail[hidden] { display: none; }
    .d-head { display: flex; align-items: flex-start; gap: 8px; padding: 8px 10px 4px; }
    .d-title { flex: 1; min-width: 0; }
    .d-title b { font-size: 13px; }
    .d-url { font-family: var(--mono); font-size: 11px; color: var(--dim); word-break: break-all; margin-top: 2px; }
    .close { border: 0; background: none; color: var(--dim); font-size: 18px; line-height: 1; cursor: pointer; }
    .chips { display: flex; gap: 6px; padding: 2px 10px 6px; flex-wrap: wrap; }
    .chip { border: 1px solid var(--line); border-radius: 12px; padding: 1px 9px; background: var(--bg);
      color: var(--fg); cursor: pointer; font: inherit; }
    .chip.on { border-color: var(--accent); background: var(--sel); }
    .tabs { display: flex; border-bottom: 1px solid var(--line); padding: 0 6px; }
    .tabs button { border: 0; background: none; color: var(--dim); padding: 6px 10px; cursor: pointer; font: inherit;
      border-bottom: 2px solid transparent; }
    .tabs button.on { color: var(--accent); border-bottom-color: var(--accent); }
    .d-body { flex: 1; overflow: auto; padding: 8px 12px 20px; }
    .d-body h3 { font-size: 12px; margin: 12px 0 4px; padding-bottom: 3px; border-bottom: 1px solid var(--line); }
    .d-body h3:first-child { margin-top: 2px; }
    table.kv { border-collapse: collapse; width: 100%; font-family: var(--mono); font-size: 11px; }
    table.kv td { padding: 2px 6px 2px 0; vertical-align: top; word-break: break-all; }
    table.kv td:first-child { color: var(--dim); white-space: nowrap; width: 1%; padding-right: 14px;
      word-break: normal; }
    pre.body { font-family: var(--mono); font-size: 11px; white-space: pre-wrap; word-break: break-all; margin: 0;
      background: var(--odd); border: 1px solid var(--line); border-radius: 4px; padding: 8px; }
    .note { color: var(--dim); margin: 4px 0; }
    .err-text { color: var(--c5); }
    img.preview { max-width: 100%; max-height: 360px; border: 1px solid var(--line); background:
      repeating-conic-gradient(#ccc 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
    table.timing { border-collapse: collapse; width: 100%; }
    table.timing td { padding: 3px 6px 3px 0; }
    table.timing td.bar { width: 55%; position: relative; }
    table.timing td.bar i { position: absolute; top: 6px; height: 10px; display: block; min-width: 1px; }
    table.timing td.ms { text-align: right; font-variant-numeric: tabular-nums; width: 80px; }
    a { color: var(--accent); }
    """#
}
