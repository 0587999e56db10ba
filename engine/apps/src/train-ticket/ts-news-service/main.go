// ts-news-service: the news list on the Train Ticket home page.
//
// Upstream serves a fixed JSON list with hoisie/web; its MongoDB code
// (ts-news-mongo) is commented out, so the list is kept in memory here too.
package main

import (
	"encoding/json"
	"log"
	"strconv"
	"time"

	"github.com/hoisie/web"
)

const listenAddr = "0.0.0.0:12862"

// maxPageSize caps ?size= so one request cannot serialise the whole archive.
const maxPageSize = 20

var store = newNewsStore()

// getNews answers GET /news-service/news?page=N&size=M, newest first.
// Items whose publication date is in the future are not shown yet.
func getNews(ctx *web.Context) string {
	page, size := pageParams(ctx.Params)
	items := store.visible(time.Now())
	start := page * size
	if start > len(items) {
		start = len(items)
	}
	end := start + size
	if end > len(items) {
		end = len(items)
	}
	body, err := json.Marshal(items[start:end])
	if err != nil {
		ctx.Abort(500, "cannot encode news")
		return ""
	}
	ctx.SetHeader("Content-Type", "application/json", true)
	return string(body)
}

// pageParams parses page (from 0) and size (1..maxPageSize, default 10).
func pageParams(params map[string]string) (int, int) {
	page, err := strconv.Atoi(params["page"])
	if err != nil || page < 0 {
		page = 0
	}
	size, err := strconv.Atoi(params["size"])
	if err != nil || size <= 0 {
		size = 10
	}
	if size > maxPageSize {
		size = maxPageSize
	}
	return page, size
}

func welcome() string {
	return "Welcome to [ News Service ] !"
}

func main() {
	web.Get("/news-service/welcome", welcome)
	web.Get("/news-service/news", getNews)
	log.Printf("ts-news-service listening on %s", listenAddr)
	web.Run(listenAddr)
}
