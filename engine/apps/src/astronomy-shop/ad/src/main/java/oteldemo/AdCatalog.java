package oteldemo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import oteldemo.Demo.Ad;

/**
 * The ad inventory, keyed by product category. Categories are the ones the product catalog
 * uses (telescopes, binoculars, accessories, assembly, travel, books, flashlights); redirect
 * URLs point at catalog product pages.
 */
final class AdCatalog {
  // Upper bound on ads returned for one request, however many context words it carries.
  static final int MAX_ADS_PER_REQUEST = 5;

  private final Map<String, List<Ad>> byCategory = new LinkedHashMap<>();

  AdCatalog() {
    add("binoculars", "/product/2ZYFJ3GM2N", "Roof Binoculars for sale. 50% off.");
    add("telescopes", "/product/66VCHSJNUP", "Starsense Explorer Refractor Telescope for sale. 20% off.");
    add("telescopes", "/product/OLJCESPC7Z", "National Park Foundation Explorascope: see the Orion Nebula tonight.");
    add("accessories", "/product/0PUK6V6EV0", "Solar System Color Imager for sale. Buy one, get a second kit free.");
    add("accessories", "/product/6E92ZMYYFZ", "Solar Filter: watch the next eclipse safely.");
    add("assembly", "/product/9SIQT8TOJO", "Optical Tube Assembly for sale. 10% off.");
    add("travel", "/product/1YMWWN1N4O", "Eclipsmart Travel Refractor Telescope for sale. Buy one, get a free bag.");
    add("books", "/product/HQTGWGPNH4", "The Comet Book: now with free shipping.");
    add("flashlights", "/product/LS4PSXUNUM", "Red Flashlight: keep your night vision. 2 for 1.");
  }

  private void add(String category, String redirectUrl, String text) {
    byCategory
        .computeIfAbsent(category, k -> new ArrayList<>())
        .add(Ad.newBuilder().setRedirectUrl(redirectUrl).setText(text).build());
  }

  /**
   * Ads matching any of the context words, in request order, without duplicates, at most
   * {@link #MAX_ADS_PER_REQUEST}. Unknown and blank words are ignored; matching is
   * case-insensitive because the frontend passes category names as typed in the URL.
   */
  List<Ad> forContextKeys(Collection<String> contextKeys) {
    Set<Ad> picked = new LinkedHashSet<>();
    for (String key : contextKeys) {
      if (key == null || key.isBlank()) {
        continue;
      }
      List<Ad> ads = byCategory.get(key.trim().toLowerCase(Locale.ROOT));
      if (ads == null) {
        continue;
      }
      for (Ad ad : ads) {
        if (picked.size() >= MAX_ADS_PER_REQUEST) {
          return new ArrayList<>(picked);
        }
        picked.add(ad);
      }
    }
    return new ArrayList<>(picked);
  }

  /** {@code count} distinct ads drawn uniformly from the whole inventory. */
  List<Ad> randomAds(int count, Random random) {
    List<Ad> all = new ArrayList<>();
    for (List<Ad> ads : byCategory.values()) {
      all.addAll(ads);
    }
    if (count >= all.size()) {
      return all;
    }
    Collections.shuffle(all, random);
    return new ArrayList<>(all.subList(0, count));
  }

  Set<String> categories() {
    return Collections.unmodifiableSet(byCategory.keySet());
  }
}
