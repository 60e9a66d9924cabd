/*
 * charts.js - the two drawings the dashboard needs, on a canvas each:
 *
 *	Stap.drawLines(canvas, series, opts)	values over time, one line a
 *		series ({ label, points: [[t, v], ...] }), a shared y scale from
 *		0 (or the lowest value) to the highest, labelled with opts.format
 *	Stap.drawHeatmap(canvas, columns, opts)	a histogram over time: one
 *		column per interval ({ t, cells: Map bucket name -> count }),
 *		one row per bucket ("lo-hi", lowest at the bottom), the colour
 *		the count on a log scale.  Returns how many cells had a count.
 *
 * The canvas is sized to its box times devicePixelRatio at each draw, so
 * the page's CSS decides the size.  No library: a few dozen lines of
 * canvas calls are simpler than a charting package's options.
 */
(function (Stap) {
	'use strict';

	const COLOURS = ['#2b7bb9', '#e6550d', '#31a354', '#756bb1', '#d6616b', '#8c6d31'];

	function fit(canvas) {
		const r = window.devicePixelRatio || 1;
		const w = Math.max(canvas.clientWidth, 50), h = Math.max(canvas.clientHeight, 30);

		if (canvas.width !== Math.round(w * r) || canvas.height !== Math.round(h * r)) {
			canvas.width = Math.round(w * r);
			canvas.height = Math.round(h * r);
		}
		const ctx = canvas.getContext('2d');
		ctx.setTransform(r, 0, 0, r, 0, 0);
		ctx.clearRect(0, 0, w, h);
		ctx.font = '10px sans-serif';
		return { ctx, w, h };
	}

	function extent(series) {
		let lo = Infinity, hi = -Infinity, t0 = Infinity, t1 = -Infinity;

		for (const s of series)
			for (const [t, v] of s.points) {
				if (v === null || !Number.isFinite(v))
					continue;
				lo = Math.min(lo, v);
				hi = Math.max(hi, v);
				t0 = Math.min(t0, t);
				t1 = Math.max(t1, t);
			}
		if (lo === Infinity)
			return null;
		lo = Math.min(lo, 0);
		if (hi === lo)
			hi = lo + 1;
		return { lo, hi, t0, t1: Math.max(t1, t0 + 1) };
	}

	function drawLines(canvas, series, opts) {
		const { ctx, w, h } = fit(canvas);
		const e = extent(series);
		const pad = { l: 2, r: 2, t: 12, b: 2 };

		if (!e) {
			ctx.fillStyle = '#888';
			ctx.fillText('waiting for values', 6, h / 2);
			return 0;
		}
		/* the last opts.window seconds; at first, a minute, so lines grow from the right */
		const span = Math.min(Math.max(e.t1 - e.t0, 60), opts.window || Infinity);
		const x = (t) => pad.l + (w - pad.l - pad.r) * (1 - (e.t1 - t) / span);
		const y = (v) => h - pad.b - (h - pad.t - pad.b) * (v - e.lo) / (e.hi - e.lo);
		let drawn = 0;

		ctx.strokeStyle = '#ddd';
		ctx.beginPath();
		ctx.moveTo(pad.l, y(e.lo) + 0.5);
		ctx.lineTo(w - pad.r, y(e.lo) + 0.5);
		ctx.stroke();
		series.forEach((s, i) => {
			ctx.strokeStyle = COLOURS[i % COLOURS.length];
			ctx.lineWidth = 1.5;
			ctx.beginPath();
			let pen = false;
			for (const [t, v] of s.points) {
				if (v === null || !Number.isFinite(v)) {
					pen = false;
					continue;
				}
				pen ? ctx.lineTo(x(t), y(v)) : ctx.moveTo(x(t), y(v));
				pen = true;
				drawn++;
			}
			ctx.stroke();
		});
		ctx.fillStyle = '#555';
		ctx.fillText('max ' + opts.format(e.hi), pad.l + 2, 10);
		return drawn;
	}

	/* "lo-hi" -> ["lo", "hi"] ("-8--5" -> ["-8", "-5"]); null for another name */
	function bucketEnds(name) {
		const m = /^(-?(?:\d+|inf))-(-?(?:\d+|inf))$/.exec(name);

		return m ? [m[1], m[2]] : null;
	}

	/* "lo-hi" -> lo as a number ("-inf" lowest); NaN for another name */
	function bucketLow(name) {
		const e = bucketEnds(name);

		if (!e)
			return NaN;
		return e[0] === '-inf' ? -Infinity : Number(e[0]);
	}

	function bucketRows(columns) {
		const names = new Set();

		for (const c of columns)
			for (const k of c.cells.keys())
				names.add(k);
		return [...names].sort((a, b) => bucketLow(a) - bucketLow(b));
	}

	/* dark blue (few) to yellow (many) */
	function heat(f) {
		const stops = [[13, 8, 135], [126, 3, 168], [204, 71, 120], [248, 149, 64], [240, 249, 33]];
		const p = Math.min(Math.max(f, 0), 1) * (stops.length - 1);
		const i = Math.min(Math.floor(p), stops.length - 2), k = p - i;
		const c = stops[i].map((a, j) => Math.round(a + (stops[i + 1][j] - a) * k));

		return 'rgb(' + c.join(',') + ')';
	}

	function drawHeatmap(canvas, columns, opts) {
		const { ctx, w, h } = fit(canvas);
		const rows = bucketRows(columns);
		const slots = Math.max(opts.slots || columns.length, 1);
		let max = 0, painted = 0;

		for (const c of columns)
			for (const v of c.cells.values())
				max = Math.max(max, v);
		ctx.fillStyle = '#f4f4f4';
		ctx.fillRect(0, 0, w, h);
		if (!rows.length || max <= 0) {
			ctx.fillStyle = '#888';
			ctx.fillText(rows.length ? 'no samples yet' : 'waiting for buckets', 6, h / 2);
			return { painted: 0, rows };
		}
		const cw = w / slots, rh = h / rows.length;
		columns.slice(-slots).forEach((c, ci) => {
			const x0 = w - (Math.min(columns.length, slots) - ci) * cw;
			rows.forEach((name, ri) => {
				const v = c.cells.get(name) || 0;
				if (v <= 0)
					return;
				ctx.fillStyle = heat(Math.log1p(v) / Math.log1p(max));
				ctx.fillRect(x0, h - (ri + 1) * rh, Math.ceil(cw), Math.ceil(rh));
				painted++;
			});
		});
		return { painted, rows, max };
	}

	Stap.drawLines = drawLines;
	Stap.drawHeatmap = drawHeatmap;
	Stap.bucketLow = bucketLow;
	Stap.bucketEnds = bucketEnds;
	Stap.colour = (i) => COLOURS[i % COLOURS.length];
})(window.Stap = window.Stap || {});
